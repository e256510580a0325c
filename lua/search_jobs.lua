#!lua flags=no-writes,allow-oom
-- search_jobs.lua: one bounded step of a search through a queue's live jobs
-- for those whose payload contains a text (plain substring, case-sensitive).
-- The records live in the namespace's one jobs hash, so a search walks it
-- with HSCAN from a cursor, one step a call: HSCAN COUNT `count` (1..1000)
-- visits about that many records (a hash bucket's records come together, so
-- a few more at most), and the call examines only what that step returned.
-- A whole search is many short calls, each far below a millisecond of Redis
-- per thousand records, never one long one. HSCAN's guarantee carries over:
-- a job present for the whole search is found at least once (a rehash may
-- return one twice; callers drop repeats); one added or gone meanwhile may or
-- may not be. Finished jobs a queue keeps are not in the jobs hash and are
-- not searched.
-- include: check clock keys job_record detached waiting job_state
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  jobs, detached, waiting, scheduled, leased, dead, ord_ready, lim_held, wf_awaiting
--   writes nothing
-- ARGV[1] queue name   ARGV[2] wake-up channel   ARGV[3] cursor ("0" to start)
-- ARGV[4] text (1..1024 bytes)   ARGV[5] count (1..1000)
-- Reply: { next_cursor, examined, now_ms, id1, state1, meta1, payload1, score1, ... }
--   next_cursor "0" when the walk is done; examined the records this step
--   looked at (the bound); state as inspect.lua reports it; score the job's
--   score in its state's sorted set, "" when it has none there.
queue_name(QUEUE)
local cursor = decimal_u64(ARGV[3], 'cursor')
local needle = text(ARGV[4], 'search text', 1024)
if needle == '' then fail('search text must not be empty') end
local count = uint(ARGV[5], 'count', 1000)
if count == 0 then fail('count must be 1 to 1000') end

-- The states whose sorted set gives a job its score (as inspect.lua reads it).
local SCORED = { leased = K.leased, dead = K.dead, waiting = K.waiting, scheduled = K.scheduled }

local step = redis.call('HSCAN', K.jobs, cursor, 'COUNT', count)
local found = step[2]
local reply = { step[1], #found / 2, now_ms() }
for i = 1, #found, 2 do
  local raw = found[i + 1]
  -- A detached record's payload is matched from K.detached (one HGET a
  -- detached record the step meets); the meta is matched with it.
  if is_detached(raw) then raw = raw .. whole_payload(found[i], '') end
  -- The cheap test first: most records do not contain the text at all.
  if string.find(raw, needle, 1, true) then
    local used = cmsgpack.unpack_one(raw)
    local payload = used >= 0 and string.sub(raw, used + 1) or ''
    if string.find(payload, needle, 1, true) then
      local id = found[i]
      local m = split_record(raw)
      if m[M.queue] == QUEUE then
        local state = state_of(id, m)
        local zset = SCORED[state]
        local score = zset and redis.call('ZSCORE', zset, id)
        if state == 'held' or (state == 'waiting' and not score) then
          score = string.format('%d', waiting_score(m))
        end
        reply[#reply + 1] = id
        reply[#reply + 1] = state
        reply[#reply + 1] = string.sub(raw, 1, used)
        reply[#reply + 1] = payload
        reply[#reply + 1] = score or ''
      end
    end
  end
end
return reply
