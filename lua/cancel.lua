#!lua flags=allow-oom
-- cancel.lua: an operator cancels jobs of one queue, in any state: they
-- leave for good, are never retried, and are kept as cancelled (with who
-- cancelled them and when) when the queue keeps finished jobs, else leave a
-- tombstone (lib/kept.lua).
--
-- allow-oom: cancelling frees memory and must work when Redis is full.
-- Per cancelled job: its record leaves jobs and its state's index (waiting:
-- the waiting zset, the fifo list (LREM, which walks the list up to the
-- job) or ord_ready; scheduled; leased; dead; blocked: ord_blocked); its
-- dedup key is freed (TTL-mode keys too) and its ordering key passes to the
-- next job behind it (lib/ordering.lua). A leased job's holder is told at
-- once on its holder channel, the wake-up channel .. ':holder:' .. node ..
-- ':' .. instance (node and instance from the record), message
-- "<job id> <lease id>"; the holder's later ack, nack and extend answer
-- "cancelled" (code -2 of ack.lua, nack.lua, extend.lua), and a lapsed lease
-- cannot bring the job back (it is in no index any more). Progress and log
-- lines of the job go with it. The cancelled ids are published,
-- space-separated, on the wake-up channel .. ':finished' (one message a call).
-- Flow control (lib/flow.lua): a held job leaves its key's held set; a
-- leased job's lease end frees its key's slot, and the wake-up channel is
-- told when that gives a held job room (or frees a queue-wide slot while
-- jobs wait).
-- Gates (lib/gate.lua): a cancelled member counts failed toward its gates
-- (which may fire them); a cancelled awaiting job leaves wf:awaiting and its
-- gate records the decision cancelled.
-- include: check clock keys job_record job_store detached ordering job_state retention_spec kept flow flow_claim events metrics gate notify
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  jobs, fifo, waiting, scheduled, leased, dead, ord_ready, ord_blocked,
--          retention, kept, tombstones, limits, lim_starts
--   writes jobs, detached, fifo, waiting, scheduled, leased, dead, dedup, dedup_ttl, ord_active,
--          ord_blocked, ord_ready, ord_blocked_n, kept, cancelled, completed,
--          tombstones, tombstones_at, retention, progress, logs,
--          lim, lim_held, lim_ready, lim_wake, events,
--          wf_gates (read too), wf_members, wf_outcomes, wf_of, wf_awaiting (read too),
--          wf_awaiting_n, wf_expire
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] by: who cancels (text, at most 128 bytes, '' = not given)
-- ARGV[4] mode: 'id', or a state (waiting | scheduled | leased | dead | held | awaiting)
--         to cancel up to `limit` of the queue's jobs in it (oldest first; for
--         waiting, released ordering successors first, then claim order; for
--         held, by key, then claim order)
-- ARGV[5] mode 'id': the job id; a state: limit (1..1000)
-- last ARGV, optional: the operator's actor, marked (lib/events.lua: ARGC leaves it out)
-- Reply, mode 'id': { code, state, at_ms } where state is the state the job
-- was cancelled in (code 1; waiting | scheduled | leased | dead | held | awaiting | blocked),
-- at_ms when it was cancelled (codes 1, 2) or completed (code 3), else 0:
-- code 1 cancelled: the job was cancelled now
-- code 0 not_found: no job with this id in this queue, and no trace of one
-- code 2 already_cancelled: the job was cancelled earlier (its kept record or tombstone says so)
-- code 3 already_completed: the job completed before (its kept record or tombstone says so)
-- Reply, a state: { cancelled now, left in that state }
queue_name(QUEUE)
local by = text(ARGV[3], 'cancelled by', 128)
local cancel_tally = tally_new() -- lib/metrics.lua: written once, by settle
-- The event names who cancelled: the given text, else the handle's actor.
if by ~= '' then BY = by end
local mode = ARGV[4]
local INDEX = { waiting = K.waiting, scheduled = K.scheduled, leased = K.leased, dead = K.dead,
  held = K.lim_held, awaiting = K.wf_awaiting }
local one_id, limit
if mode == 'id' then
  one_id = text(ARGV[5], 'job id', 64)
  if one_id == '' then fail('job id must not be empty') end
elseif INDEX[mode] then
  limit = uint(ARGV[5], 'cancel limit', 1000)
  if limit < 1 then fail('cancel limit must be at least 1') end
else
  fail('mode must be id or one of waiting, scheduled, leased, dead, held, awaiting; got ' .. tostring(mode))
end

local now = now_ms()
local policy = retention_policy()
local kept_ids, kept_raws, buried, buried_at = {}, {}, {}, {}
-- Leases this call ended, and whether a freed slot gave a held job room.
local freed, wake = 0, false

-- The state a live job of this queue is in (lib/job_state.lua), and the
-- member that places it when that is not its id (blocked, released
-- successor).
local function placement(id, m)
  local state, where = state_of(id, m)
  if where == 'ready' then
    return state, where, QUEUE .. '\n' .. pad16(m[M.seq]) .. '\n' .. id
  end
  if state == 'blocked' then
    return state, 'blocked', m[M.ordering_key] .. '\n' .. pad16(m[M.seq]) .. '\n' .. id
  end
  return state, where
end

-- Cancel the live job `id` (record `m`) in `state`; `where` and `member`
-- say how it is placed when not by its id in its state's index.
local function cancel_job(id, m, state, where, member)
  if where == 'fifo' then
    redis.call('LREM', K.fifo, 1, id)
  elseif where == 'ready' then
    redis.call('ZREM', K.ord_ready, member)
  elseif where == 'blocked' then
    if redis.call('ZREM', K.ord_blocked, member) == 1 and
        redis.call('HINCRBY', K.ord_blocked_n, QUEUE, -1) <= 0 then
      redis.call('HDEL', K.ord_blocked_n, QUEUE)
    end
  elseif state == 'held' then
    unhold(id, m[M.limit_key], waiting_score(m))
  elseif state == 'awaiting' then
    -- Its gate may have fired it into ord:ready already.
    redis.call('ZREM', K.ord_ready, QUEUE .. '\n' .. pad16(m[M.seq]) .. '\n' .. id)
  elseif where ~= 'popped' then
    redis.call('ZREM', INDEX[state], id)
  end
  -- A waiter leaves wf:awaiting, whether it was found awaiting or, fired,
  -- in ord:ready by a cancel of waiting jobs; its gate records the decision.
  if wf.is_awaiting(id, m) then
    wf.leave_awaiting(id, m)
    wf.decided(m[M.awaits], id, 'cancelled')
  end
  if state == 'leased' then
    freed = freed + 1
    if free_slot(m, now) then wake = true end
    redis.call('PUBLISH', CHANNEL .. ':holder:' .. m[M.worker_node] .. ':' ..
      string.format('%d', m[M.worker_instance]),
      id .. ' ' .. string.format('%d', m[M.lease_id]))
  end
  -- A TTL-mode dedup key is freed as well: the job it guarded is gone.
  local dk = m[M.dedup_key]
  if dk ~= '' and m[M.dedup_ttl] > 0 and redis.call('HGET', K.dedup, dk) == id then
    redis.call('HDEL', K.dedup, dk)
    redis.call('ZREM', K.dedup_ttl, dk)
  end
  tally_count(cancel_tally, m[M.name], MV.cancelled)
  wf.count(id, m, 'cancelled', '', now)
  release_keys(id, m)
  delete_job_record(id)
  if m[M.noted] == 1 then
    redis.call('HDEL', K.progress, id)
    redis.call('HDEL', K.logs, id)
  end
  if policy then
    local k = new_kept('cancelled', QUEUE, now)
    k[KR.name] = m[M.name]
    k[KR.attempt] = m[M.attempts]
    k[KR.holder_node] = m[M.worker_node]
    k[KR.holder_instance] = m[M.worker_instance]
    k[KR.enqueued_at] = m[M.enqueued_at]
    k[KR.cancelled_by] = by
    k[KR.cancelled_in] = state
    kept_ids[#kept_ids + 1] = id
    kept_raws[#kept_raws + 1] = encode_kept(k)
  else
    buried[#buried + 1] = id
    buried_at[#buried_at + 1] = now
  end
end

-- Keep or bury what was cancelled, then trim within the same bound as an
-- ack, and announce the ids on the wake-up channel .. ':finished'.
local function settle(count, ids)
  tally_write(cancel_tally, now)
  if count == 1 then emit(K.events, 'cancelled', QUEUE, now, 'count', '1', 'id', ids[1])
  elseif count > 0 then emit(K.events, 'cancelled', QUEUE, now, 'count', count, 'detail', mode) end
  if #ids > 0 then redis.call('PUBLISH', CHANNEL .. ':finished', table.concat(ids, ' ')) end
  settle_keys(now)
  if wake or (freed > 0 and queue_slots_freed(freed)) then wake_workers(QUEUE) end
  if policy then
    keep(kept_ids, kept_raws, K.cancelled, now)
    trim_kept(policy, now, count)
  else
    bury(buried, buried_at, 'cancelled', now, DEFAULT_TOMBSTONE_MS)
    trim_tombstones(now, math.min(2 * count + TRIM_FLOOR, TRIM_AT_MOST))
  end
end

if one_id then
  local m = load_meta(one_id)
  if not m or m[M.queue] ~= QUEUE then
    local outcome, at = finished_as(one_id)
    if outcome == 'cancelled' then return { 2, '', at } end
    if outcome == 'completed' then return { 3, '', at } end
    return { 0, '', 0 }
  end
  local state, where, member = placement(one_id, m)
  cancel_job(one_id, m, state, where, member)
  settle(1, { one_id })
  return { 1, state, now }
end

-- A state: its oldest `limit` jobs (for waiting, released successors, then
-- the claim order's heads of the zset and the fifo list).
local picked = {}
if mode == 'waiting' then
  local ready = redis.call('ZRANGEBYLEX', K.ord_ready, '[' .. QUEUE .. '\n', '(' .. QUEUE .. '\11',
    'LIMIT', 0, limit)
  for _, member in ipairs(ready) do
    picked[#picked + 1] = { string.sub(member, #QUEUE + 19), 'ready', member }
  end
  local left = limit - #picked
  if left > 0 then
    for _, id in ipairs(redis.call('ZRANGE', K.waiting, 0, left - 1)) do
      picked[#picked + 1] = { id, 'index' }
    end
  end
  left = limit - #picked
  if left > 0 then
    -- The fifo list's head is popped as claims pop it: no list walk.
    for _, id in ipairs(redis.call('LPOP', K.fifo, left) or {}) do
      picked[#picked + 1] = { id, 'popped' }
    end
  end
elseif mode == 'awaiting' then
  for _, member in ipairs(redis.call('ZRANGEBYLEX', K.wf_awaiting, '[' .. QUEUE .. '\n',
      '(' .. QUEUE .. '\11', 'LIMIT', 0, limit)) do
    picked[#picked + 1] = { string.sub(member, #QUEUE + 2), 'awaiting', member }
  end
elseif mode == 'held' then
  for _, member in ipairs(redis.call('ZRANGE', K.lim_held, 0, limit - 1)) do
    local id = string.match(member, '\n%d+\n(.*)$')
    picked[#picked + 1] = { id, 'held', member }
  end
else
  for _, id in ipairs(redis.call('ZRANGE', INDEX[mode], 0, limit - 1)) do
    picked[#picked + 1] = { id, 'index' }
  end
end
local count, cancelled = 0, {}
for _, p in ipairs(picked) do
  local id, where, member = p[1], p[2], p[3]
  local m = load_meta(id)
  if m and m[M.queue] == QUEUE then
    cancel_job(id, m, mode, where, member)
    count = count + 1
    cancelled[count] = id
  elseif where == 'index' then
    redis.call('ZREM', INDEX[mode], id)
  elseif where == 'ready' then
    redis.call('ZREM', K.ord_ready, member)
  elseif where == 'held' then
    unhold_member(string.match(member, '^[^\n]*'), member)
  elseif where == 'awaiting' then
    redis.call('ZREM', K.wf_awaiting, member)
  end
end
settle(count, cancelled)
local left
if mode == 'waiting' then
  left = redis.call('ZCARD', K.waiting) + redis.call('LLEN', K.fifo) +
    redis.call('ZLEXCOUNT', K.ord_ready, '[' .. QUEUE .. '\n', '(' .. QUEUE .. '\11')
elseif mode == 'awaiting' then
  left = tonumber(redis.call('HGET', K.wf_awaiting_n, QUEUE) or '0')
else
  left = redis.call('ZCARD', INDEX[mode])
end
return { count, left }
