-- lib/gate_decide.lua: deciding a waiter, in its own queue's scripts (so
-- this queue's keys are the waiter's): released into its queue through
-- admit() (its ordering and limit keys apply from here), dead-lettered,
-- cancelled (kept or tombstoned as any cancel), or held for an operator.
-- Used by the claim (lib/promote.lua `promote_ready`, for waiters its gate
-- fired) and by gate_decide.lua (an operator's decision on a held waiter).
-- include: keys job_record job_store detached ordering gate_record gate retention_spec kept kept_record events dead_bound
--
-- Its helpers are fields of one table (see lib/gate.lua for why).
local wf_waiter = {}

-- Why a waiter is failed when a member failed, or its gate was cancelled.
wf_waiter.CANCELLED_BECAUSE = { batch = 'its batch was cancelled',
  deps = 'its dependencies were cancelled', tree = 'its tree was cancelled' }

-- Waiter `id` (record `m`) enters its queue; true when it is due now.
function wf_waiter.release(id, m, now)
  wf.leave_awaiting(id, m)
  emit(K.events, 'released', QUEUE, now, 'id', id, 'detail', m[M.awaits])
  return admit(id, m, m[M.not_before], now)
end

-- Waiter `id` (record `m`) is dead-lettered with error `err`, and its
-- queue's dead letters trimmed to its dead-letter bound, if it has one
-- (lib/dead_bound.lua: one HGET when it has none).
function wf_waiter.dead_letter(id, m, err, now)
  wf.leave_awaiting(id, m)
  m[M.error] = string.sub(err, 1, 4096)
  m[M.died_at] = now
  wf.count(id, m, 'dead', m[M.error], now)
  store_meta(id, m)
  redis.call('ZADD', K.dead, now, id)
  release_keys(id, m)
  emit(K.events, 'dead', QUEUE, now, 'id', id, 'name', m[M.name], 'error', m[M.error],
    'attempts', m[M.attempts])
  bound_dead(now)
end

-- Waiter `id` (record `m`) is cancelled because of `why`: gone for good,
-- kept as cancelled when its queue keeps finished jobs, else tombstoned.
function wf_waiter.cancel(id, m, why, now)
  wf.leave_awaiting(id, m)
  local dk = m[M.dedup_key]
  if dk ~= '' and m[M.dedup_ttl] > 0 and redis.call('HGET', K.dedup, dk) == id then
    redis.call('HDEL', K.dedup, dk)
    redis.call('ZREM', K.dedup_ttl, dk)
  end
  release_keys(id, m)
  wf.count(id, m, 'cancelled', why, now)
  delete_job_record(id)
  local policy = retention_policy()
  if policy then
    local k = new_kept('cancelled', QUEUE, now)
    k[KR.name], k[KR.attempt], k[KR.enqueued_at] = m[M.name], m[M.attempts], m[M.enqueued_at]
    k[KR.cancelled_by], k[KR.cancelled_in] = why, 'awaiting'
    keep({ id }, { encode_kept(k) }, K.cancelled, now)
  else
    bury({ id }, { now }, 'cancelled', now, DEFAULT_TOMBSTONE_MS)
  end
  emit(K.events, 'cancelled', QUEUE, now, 'count', '1', 'id', id, 'detail', why)
  redis.call('PUBLISH', CHANNEL .. ':finished', id)
end

-- Decide waiter `id` (record `m`, in wf:awaiting, its gate fired or was
-- cancelled): its gate's outcome and its own policy say how. Returns true
-- when it entered its queue due now (the caller wakes workers).
function wf_waiter.decide(id, m, now)
  local gid = m[M.awaits]
  local g = wf.load(gid)
  -- A gate deleted under its waiter (an operator's doing) decides nothing:
  -- the waiter runs rather than wait forever.
  if not g then return wf_waiter.release(id, m, now) end
  local state = g[G.state]
  if state ~= 'done' and state ~= 'cancelled' then return false end
  local w
  for _, each in ipairs(g[G.waiters]) do
    if each[GW.id] == id then w = each end
  end
  local condition, on_failure = 'success', 'dead'
  if w then condition, on_failure = w[GW.condition], w[GW.on_failure] end
  local decision, due_now = nil, false
  if state == 'cancelled' then
    decision = 'cancelled'
    wf_waiter.cancel(id, m, wf_waiter.CANCELLED_BECAUSE[g[G.kind]] or 'its gate was cancelled', now)
  elseif condition == 'all' or g[G.failed] == 0 then
    decision = 'released'
    due_now = wf_waiter.release(id, m, now)
  elseif on_failure == 'hold' then
    -- It stays in wf:awaiting, no longer fired: held until an operator decides.
    decision = 'held'
    wf.count_fired(QUEUE, -1)
  elseif on_failure == 'cancel' then
    decision = 'cancelled'
    wf_waiter.cancel(id, m, 'dependency ' .. g[G.first_failure], now)
  else
    decision = 'dead'
    wf_waiter.dead_letter(id, m, 'dependency ' .. g[G.first_failure], now)
  end
  if w then
    w[GW.decision] = decision
    wf.save(gid, g)
  end
  return due_now
end
