#!lua
-- promote_job.lua: scheduled jobs become due now ("promote"), or only those
-- backing off after a failure ("retry now"): one transition, two filters.
-- The listed ids, or, with no ids, up to `limit` of the queue's scheduled
-- jobs soonest due first (callers loop for "all", passing back the cursor).
--
-- A promoted job keeps its priority and seq, so it goes exactly where a due
-- job of its priority and seq goes in the claim order (lib/waiting.lua
-- `place`), and its not_before becomes now. It enters through `admit`, as a
-- due job does: if another live job holds its ordering key it waits behind
-- it (blocked); in a paused queue it waits like any due job; with a limit
-- key it is held by its key (lib/flow.lua) like any due keyed job. Its attempts,
-- dedup key and ordering key stay as they were (it is the same live job).
-- "Retry now" of a dead job is the dead-letter requeue (requeue_dead.lua);
-- this script refuses a dead job with code dead.
--
-- No allow-oom: rewriting a record can grow it; out of memory, nothing runs.
-- include: check clock keys job_store ordering job_state events notify
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  leased, dead, fifo, ord_ready, ord_active, limits, lim_starts
--   writes jobs, scheduled, waiting, ord_active, ord_blocked, ord_blocked_n,
--          lim, lim_held, lim_ready, lim_wake, events
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] mode: "promote" (any scheduled job), "retry" (only a scheduled
--         job with attempts > 0, i.e. backing off before a retry), or
--         "count" (bulk form only, a dry run of "retry": counts the jobs
--         backing off among those examined and writes nothing, not even the
--         removal of a dangling member; what `redq jobs retry --queue` asks
--         and reports with)
-- ARGV[4] limit (1..1000): most jobs changed (or, in bulk, examined) per call
-- ARGV[5] cursor, bulk form only: how many scheduled jobs at the head of the
--         set an earlier call skipped (retry mode: delayed jobs that never
--         failed); "0" to start; ignored when ids are given
-- ARGV[6..] job ids (at most `limit`); none = the bulk form
-- last ARGV, optional: the operator's actor, marked (lib/events.lua: ARGC leaves it out)
-- Event (none in count mode): one `promoted` a call that changed a job (count; id when one listed
-- id was promoted; detail "run now" or, retry mode, "retry now").
-- Reply: { done, scheduled_left, cursor, code_1 .. code_n } with one code per
-- listed id, in order (none in the bulk form); cursor is the bulk form's next
-- ARGV[5], or -1 once the set has been examined to its end. In count mode,
-- done is how many of the jobs examined are backing off.
-- code 1 promoted: the job is due now (waiting, or blocked behind the holder of its ordering key)
-- code 0 not_found: no job with this id in this queue
-- code 2 waiting: the job is already due and waiting to be claimed; nothing changed
-- code 3 leased: the job is running under a lease; nothing changed
-- code 4 dead: the job is a dead letter (requeue it instead); nothing changed
-- code 5 blocked: the job waits behind the holder of its ordering key, not for a time; nothing changed
-- code 6 not_backing_off: retry mode only: the job is scheduled but has not failed (a delay); nothing changed
-- code 7 held: the job is due but held back by its limit key's limits; nothing changed
-- code 8 awaiting: the job waits on its gate (its batch, dependencies or tree); nothing changed
queue_name(QUEUE)
local mode = ARGV[3]
if mode ~= 'promote' and mode ~= 'retry' and mode ~= 'count' then
  fail('mode must be "promote", "retry" or "count", got ' .. string.format('%q', tostring(mode)))
end
local limit = uint(ARGV[4], 'promote limit', 1000)
if limit < 1 then fail('promote limit must be at least 1') end
local cursor = uint(ARGV[5], 'cursor', MAX_U32)
local ids = {}
for i = 6, ARGC do ids[#ids + 1] = text(ARGV[i], 'job id', 64) end
if #ids > limit then fail('at most ' .. limit .. ' ids per call, got ' .. #ids) end
if mode == 'count' and #ids > 0 then fail('count mode takes no ids') end

-- Validation is complete: from here on the script writes.
local now = now_ms()
local done, wake = 0, false

-- The transition itself, for a job known to be scheduled in this queue.
local function promote(id, m)
  redis.call('ZREM', K.scheduled, id)
  m[M.not_before] = now
  store_meta(id, m)
  if admit(id, m, now, now) then wake = true end
  done = done + 1
end

local reply = { 0, 0, -1 }
if #ids > 0 then
  for _, id in ipairs(ids) do
    local m = load_meta(id)
    local code = 0
    if m and m[M.queue] == QUEUE then
      local state = state_of(id, m)
      if state == 'scheduled' then
        if mode == 'retry' and m[M.attempts] == 0 then
          code = 6
        else
          promote(id, m)
          code = 1
        end
      elseif state == 'waiting' then code = 2
      elseif state == 'leased' then code = 3
      elseif state == 'dead' then code = 4
      elseif state == 'held' then code = 7
      elseif state == 'awaiting' then code = 8
      else code = 5
      end
    end
    reply[#reply + 1] = code
  end
else
  local batch = redis.call('ZRANGE', K.scheduled, cursor, cursor + limit - 1)
  for _, id in ipairs(batch) do
    local m = load_meta(id)
    if mode == 'count' then
      -- Nothing moves: every member examined is passed.
      if m and m[M.attempts] > 0 then done = done + 1 end
      cursor = cursor + 1
    elseif not m then
      -- A dangling member (its record is gone): drop it, as a claim would.
      redis.call('ZREM', K.scheduled, id)
    elseif mode == 'retry' and m[M.attempts] == 0 then
      cursor = cursor + 1
    else
      promote(id, m)
    end
  end
  if #batch == limit then reply[3] = cursor end
end
if wake then wake_workers(QUEUE) end
local how = mode == 'retry' and 'retry now' or 'run now'
if mode == 'count' then -- a dry run: counted, nothing changed
elseif done == 1 and #ids == 1 then emit(K.events, 'promoted', QUEUE, now, 'count', '1', 'id', ids[1], 'detail', how)
elseif done > 0 then emit(K.events, 'promoted', QUEUE, now, 'count', done, 'detail', how) end
reply[1] = done
reply[2] = redis.call('ZCARD', K.scheduled)
return reply
