#!lua flags=allow-oom
-- delete_job.lua: delete jobs for good, in any state: the listed ids, or,
-- with no ids, up to `limit` of the queue's jobs in one state (callers loop
-- for "all", passing back the cursor).
--
-- A deleted job is gone at once and whole: its record, its place in its
-- state's structure, its progress and log lines. What it held is released
-- as when a job completes (lib/ordering.lua `release_keys`): its ordering
-- key passes to the next job queued behind it, and its dedup key is freed,
-- here in both dedup modes (a TTL-mode key that names the deleted job is
-- freed too: an operator deleting a job wants to be able to enqueue it
-- again). A blocked job leaves its place behind its key's holder.
--
-- A leased job is refused (code leased) unless `force` is 1; forced, its
-- lease is voided with the job and its holder is told at once on its holder
-- channel, as cancel.lua tells it (message "<job id> <lease id>", so the
-- job's cancellation fires): the holder's later ack answers already_gone,
-- its nack, extend and release lease_lost, and nothing brings the job back.
--
-- A finished job (by id only) is deleted too: its kept record (lib/kept.lua:
-- the kept hash, its place in the queue's completed or cancelled index, the
-- bytes the queue's retention is charged for it) or its tombstone. A
-- tombstone names no queue (it is the namespace's), so the tombstone of an
-- id that no live job or kept record of another queue claims is deleted
-- whichever queue the call names. Which of these the id is, is decided
-- before anything of it is written.
--
-- Waiters (RedisQueue::wait_for): when the queue keeps finished jobs (one
-- HGET of its retention policy a call that deleted something, as an ack
-- reads it), the deleted live jobs' ids are published, space-separated, on
-- the wake-up channel .. ':finished', once a call.
--
-- Flow control (lib/flow.lua): a held job leaves its key's held set; a
-- forced delete of a leased job frees its key's slot, and the wake-up
-- channel is told when that gives a held job room (or frees a queue-wide
-- slot while jobs wait).
--
-- Gates (lib/gate.lua): a deleted member counts failed (deleted) toward its
-- gates, which may fire them; a deleted awaiting job leaves wf:awaiting (its
-- gate keeps it as a waiter whose job is gone: firing skips it).
--
-- allow-oom: deleting frees memory.
-- include: check clock keys job_store detached ordering job_state unplace notes flow flow_claim events gate notify retention_spec kept
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  limits, lim_starts, retention (read too)
--   writes jobs, detached, fifo, waiting, scheduled, leased, dead, dedup, dedup_ttl,
--          ord_active, ord_blocked, ord_ready, ord_blocked_n, progress, logs,
--          lim, lim_held, lim_ready, lim_wake, events,
--          wf_gates (read too), wf_members, wf_outcomes, wf_of, wf_awaiting (read too),
--          wf_awaiting_n, wf_expire,
--          kept, completed, cancelled, tombstones, tombstones_at (a finished job, by id)
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] limit (1..1000): most jobs deleted (or, in bulk, examined) per call
-- ARGV[4] force: 1 = a leased job is deleted too (its lease voided), 0 = refused
-- ARGV[5] state, bulk form only: waiting | scheduled | held | blocked | dead |
--         awaiting | leased (leased needs force); "" when ids are given
-- ARGV[6] cursor, bulk form only: "" to start; blocked jobs are found in the
--         namespace-wide ord:blocked set, examined from this lex member on
-- ARGV[7..] job ids (at most `limit`); none = the bulk form
-- last ARGV, optional: the operator's actor, marked (lib/events.lua: ARGC leaves it out)
-- Reply: { done, left, cursor, code_1 .. code_n } with one code per listed
-- id, in order (none in the bulk form). left: the bulk state's jobs still in
-- the queue (0 when ids are given); cursor: the bulk form's next ARGV[6], or
-- "" once the state has been examined to its end.
-- code 1 deleted: the job is gone, with what it held
-- code 2 deleted_completed: the job had completed; its kept record (with its result) or its tombstone is gone
-- code 3 deleted_cancelled: the job had been cancelled; its kept record or its tombstone is gone
-- code 0 not_found: no job with this id in this queue, and no kept record or tombstone of one
-- code -1 leased: the job is running under a lease and force was not given; nothing changed
queue_name(QUEUE)
local limit = uint(ARGV[3], 'delete limit', 1000)
if limit < 1 then fail('delete limit must be at least 1') end
local force = uint(ARGV[4], 'force', 1) == 1
local bulk_state = ARGV[5]
local cursor = ARGV[6]
-- An ord:blocked member (key, seq, id with "\n" between), so not text().
if type(cursor) ~= 'string' or #cursor > 600 then fail('cursor must be at most 600 bytes') end
local ids = {}
for i = 7, ARGC do ids[#ids + 1] = text(ARGV[i], 'job id', 64) end
if #ids > limit then fail('at most ' .. limit .. ' ids per call, got ' .. #ids) end
if #ids == 0 then
  local known = { waiting = true, scheduled = true, held = true, blocked = true, dead = true,
    leased = true, awaiting = true }
  if not known[bulk_state] then
    fail('state must be one of waiting, scheduled, held, blocked, dead, awaiting, leased, got ' ..
      string.format('%q', tostring(bulk_state)))
  end
  if bulk_state == 'leased' and not force then
    fail('deleting leased jobs needs force (their leases are voided)')
  end
elseif bulk_state ~= '' then
  fail('state is for the bulk form only (no ids)')
end

-- Validation is complete: from here on the script writes.
local done = 0
-- The live jobs deleted, announced to waiters (settle).
local gone = {}
-- A by-id delete of one finished job: its outcome, for the event.
local finished_detail
local now = now_ms()
-- Leases this call voided, and whether a freed slot gave a held job room.
local freed, wake = 0, false

-- Free the job's dedup key, in either mode, while it still names this job.
local function free_dedup(id, m)
  local dk = m[M.dedup_key]
  if dk ~= '' and redis.call('HGET', K.dedup, dk) == id then
    redis.call('HDEL', K.dedup, dk)
    redis.call('ZREM', K.dedup_ttl, dk)
  end
end

-- Remove job `id` (record `m`, in `state`, waiting in `structure`) from where it
-- is, release what it holds, and delete it.
local function remove(id, m, state, structure)
  if state == 'leased' then
    redis.call('ZREM', K.leased, id)
    freed = freed + 1
    if free_slot(m, now) then wake = true end
    -- Its holder hears it now (its job's cancellation fires), not at its
    -- next heartbeat; rare, so on PUBLISH, as cancel.lua tells a holder.
    redis.call('PUBLISH', CHANNEL .. ':holder:' .. m[M.worker_node] .. ':' ..
      string.format('%d', m[M.worker_instance]),
      id .. ' ' .. string.format('%d', m[M.lease_id]))
  elseif state == 'dead' then
    redis.call('ZREM', K.dead, id)
  else
    unplace(id, m, state, structure)
  end
  free_dedup(id, m)
  -- A dead job released its keys when it died; a blocked one holds none
  -- (release_keys checks that it is the holder before handing a key on).
  if state ~= 'dead' then release_keys(id, m) end
  -- A waiter leaves wf:awaiting, whether it was found awaiting or, fired,
  -- in ord:ready by a delete of waiting jobs.
  if m[M.awaits] ~= '' then wf.leave_awaiting(id, m) end
  wf.count(id, m, 'deleted', '', now)
  delete_job_record(id)
  -- Only a job with notes has any to delete (lib/notes.lua).
  if m[M.noted] == 1 then forget_notes({ id }) end
  done = done + 1
  gone[#gone + 1] = id
end

-- The codes of a finished job's deletion, by its outcome.
local FINISHED_CODE = { completed = 2, cancelled = 3 }

-- What is left of finished job `id`, if this call may delete it: its kept
-- record of this queue, or a tombstone (which names no queue). Returns the
-- outcome, and the kept record's bytes (nil for a tombstone); nil when
-- neither is there. Reads only.
local function finished_trace(id)
  local raw = redis.call('HGET', K.kept, id)
  if raw then
    local k = decode_kept(raw)
    if k[KR.queue] ~= QUEUE then return nil end
    return k[KR.outcome], raw
  end
  raw = redis.call('HGET', K.tombstones, id)
  if raw then return (tombstone_read(raw)) end
  return nil
end

-- Delete finished job `id`'s kept record (`raw`, with `outcome`), or its
-- tombstone when `raw` is nil, with their index entries and charged bytes.
local function forget_finished(id, outcome, raw)
  if raw then
    redis.call('HDEL', K.kept, id)
    redis.call('ZREM', outcome == 'completed' and K.completed or K.cancelled, id)
    redis.call('HINCRBY', K.retention, bytes_field(), -kept_charge(id, raw))
  end
  redis.call('HDEL', K.tombstones, id)
  redis.call('ZREM', K.tombstones_at, id)
  done = done + 1
end

-- Put the keys whose held sets or slots changed right, and wake workers
-- when that lets a job start.
local function settle()
  settle_keys(now)
  if finished_detail then
    emit(K.events, 'deleted', finished_detail[2], now, 'count', '1', 'id', ids[1], 'detail', finished_detail[1])
  elseif done == 1 and #ids == 1 then emit(K.events, 'deleted', QUEUE, now, 'count', '1', 'id', ids[1])
  elseif done > 0 then emit(K.events, 'deleted', QUEUE, now, 'count', done, 'detail', #ids > 0 and 'by id' or bulk_state) end
  if wake or (freed > 0 and queue_slots_freed(freed)) then wake_workers(QUEUE) end
  if #gone > 0 and retention_policy() then
    redis.call('PUBLISH', CHANNEL .. ':finished', table.concat(gone, ' '))
  end
end

local reply = { 0, 0, '' }
if #ids > 0 then
  for _, id in ipairs(ids) do
    local m = load_meta(id)
    local code = 0
    if m and m[M.queue] == QUEUE then
      local state, structure = state_of(id, m)
      if state == 'leased' and not force then
        code = -1
      else
        remove(id, m, state, structure)
        code = 1
      end
    elseif not m then
      local outcome, raw = finished_trace(id)
      if FINISHED_CODE[outcome] then
        forget_finished(id, outcome, raw)
        code = FINISHED_CODE[outcome]
        -- A kept record is its queue's; a tombstone is the namespace's.
        if #ids == 1 then
          finished_detail = { (raw and 'kept ' or 'tombstone ') .. outcome, raw and QUEUE or '' }
        end
      end
    end
    reply[#reply + 1] = code
  end
  settle()
  return reply
end

local left
if bulk_state == 'blocked' then
  -- ord:blocked holds every queue's blocked jobs, ordered by key: examine
  -- `limit` members from the cursor on, deleting this queue's.
  local from = cursor == '' and '-' or '(' .. cursor
  local members = redis.call('ZRANGEBYLEX', K.ord_blocked, from, '+', 'LIMIT', 0, limit)
  for _, member in ipairs(members) do
    local id = string.match(member, '\n%d+\n(.*)$')
    local m = id and load_meta(id)
    if m and m[M.queue] == QUEUE then remove(id, m, 'blocked') end
  end
  if #members == limit then reply[3] = members[#members] end
  left = tonumber(redis.call('HGET', K.ord_blocked_n, QUEUE) or '0')
elseif bulk_state == 'awaiting' then
  for _, member in ipairs(redis.call('ZRANGEBYLEX', K.wf_awaiting, '[' .. QUEUE .. '\n',
      '(' .. QUEUE .. '\11', 'LIMIT', 0, limit)) do
    local id = string.sub(member, #QUEUE + 2)
    local m = load_meta(id)
    if m then remove(id, m, 'awaiting') else redis.call('ZREM', K.wf_awaiting, member) end
  end
  left = tonumber(redis.call('HGET', K.wf_awaiting_n, QUEUE) or '0')
  if left > 0 then reply[3] = 'more' end
elseif bulk_state == 'held' then
  for _, member in ipairs(redis.call('ZRANGE', K.lim_held, 0, limit - 1)) do
    local id = string.match(member, '\n%d+\n(.*)$')
    local m = load_meta(id)
    if m then remove(id, m, 'held') else unhold_member(string.match(member, '^[^\n]*'), member) end
  end
  left = redis.call('ZCARD', K.lim_held)
  if left > 0 then reply[3] = 'more' end
elseif bulk_state == 'waiting' then
  -- The claim order's head (fifo and zset), then released successors.
  local popped = pop_waiting(limit)
  for _, id in ipairs(popped) do
    local m = load_meta(id)
    if m then remove(id, m, 'waiting', 'popped') end
  end
  if #popped < limit then
    local prefix = QUEUE .. '\n'
    for _, member in ipairs(redis.call('ZRANGEBYLEX', K.ord_ready, '[' .. prefix,
        '(' .. QUEUE .. '\11', 'LIMIT', 0, limit - #popped)) do
      local id = string.sub(member, #QUEUE + 19)
      local m = load_meta(id)
      if m then remove(id, m, 'waiting', 'ready') else redis.call('ZREM', K.ord_ready, member) end
    end
  end
  left = waiting_count() +
    redis.call('ZLEXCOUNT', K.ord_ready, '[' .. QUEUE .. '\n', '(' .. QUEUE .. '\11')
  if left > 0 then reply[3] = 'more' end
else
  -- scheduled, dead or leased (checked above), each named so the composer
  -- declares it (lib/keys.lua).
  local set = ({ scheduled = K.scheduled, dead = K.dead, leased = K.leased })[bulk_state]
  for _, id in ipairs(redis.call('ZRANGE', set, 0, limit - 1)) do
    local m = load_meta(id)
    if m then remove(id, m, bulk_state) else redis.call('ZREM', set, id) end
  end
  left = redis.call('ZCARD', set)
  if left > 0 then reply[3] = 'more' end
end
settle()
reply[1] = done
reply[2] = left
return reply
