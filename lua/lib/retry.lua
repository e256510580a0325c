-- lib/retry.lua: a failed attempt (a worker's nack, or a lease that lapsed):
-- back to the queue after a delay, or to the dead-letter set.
-- A failed attempt ends the lease: its limit key's slot is freed
-- (lib/flow.lua), and idle workers are woken when that gives a held job of
-- the key room; a dead-letter also wakes them when it frees the queue's
-- last queue-wide slot (one HGET, only when dead-lettering). A retry due
-- now wakes them anyway; a delayed retry of a job without a limit key on a
-- queue at its queue-wide concurrency does not (that would cost every nack
-- an HGET): the failing worker's own next claim takes the slot.
-- A reclaim that dead-letters jobs then trims the queue's dead letters to
-- its dead-letter bound, if it has one (lib/dead_bound.lua: one HGET per
-- reclaim that dead-letters, none otherwise).
-- include: keys job_record job_store lease stats waiting ordering flow flow_claim events metrics gate notify dead_bound

local MAX_ERROR_BYTES = 4096

-- Record a failed attempt of a leased job: back to the queue after `delay`,
-- or to the dead-letter set when forced, when attempts are spent, or when the
-- retry window has passed. `resolved` is the lease this failure resolves when
-- a worker reported it (so a resent nack is recognised), 0 for a reclaim.
-- Returns dead (bool) and the due time when requeued.
local function fail_attempt(id, m, now, err, force_dead, delay, resolved)
  m[M.attempts] = m[M.attempts] + 1
  m[M.error] = string.sub(err, 1, MAX_ERROR_BYTES)
  m[M.resolved_lease] = resolved
  clear_lease(m)
  redis.call('ZREM', K.leased, id)
  local wake = free_slot(m, now)
  bump_stats('f', now)
  local spent = m[M.max_attempts] > 0 and m[M.attempts] >= m[M.max_attempts]
  local expired = m[M.retry_window] > 0 and now >= m[M.enqueued_at] + m[M.retry_window]
  if force_dead or spent or expired then
    m[M.died_at] = now
    count_outcome(m[M.name], MV.dead, now)
    -- Its gates count it failed now (clearing its gate fields, so a
    -- requeued dead letter does not count again).
    wf.count(id, m, 'dead', m[M.error], now)
    store_meta(id, m)
    redis.call('ZADD', K.dead, now, id)
    release_keys(id, m)
    emit(K.events, 'dead', m[M.queue], now, 'id', id, 'name', m[M.name], 'error', m[M.error], 'attempts', m[M.attempts])
    if wake or queue_slots_freed(1) then wake_workers(QUEUE) end
    return true, 0
  end
  local due = now + delay
  m[M.not_before] = due -- due no earlier: the next claim's wait counts from here
  store_meta(id, m)
  count_outcome(m[M.name], MV.retried, now)
  if place(id, m, due, now) or wake then wake_workers(QUEUE) end
  emit(K.events, 'retried', m[M.queue], now, 'id', id, 'name', m[M.name], 'error', m[M.error], 'attempts', m[M.attempts])
  return false, due
end

-- How long a job whose lease lapsed waits before it is due again: its
-- backoff policy's delay for the attempt it just lost (the Rust side's
-- exponential_backoff: ceiling = min(cap, base * 2^(attempts so far)), then
-- "equal jitter" in [ceiling/2, ceiling]). Scripts must be deterministic, so
-- the jitter comes from the lost lease's id: jobs that lapsed together (a
-- crashed worker's batch) hold consecutive ids and come back spread out.
local function reclaim_delay(m)
  local base = m[M.backoff_base]
  if base <= 0 then return 0 end
  local ceiling = math.min(m[M.backoff_cap], base * 2 ^ math.min(m[M.attempts], 40))
  local half = math.floor(ceiling / 2)
  local spread = (m[M.lease_id] % 65521) * 40503 % 65536 / 65535
  return half + math.floor((ceiling - half) * spread)
end

-- Return up to `limit` lapsed leases of this queue to the queue after their
-- backoff (or to the dead-letter set), each counting one failed attempt.
local function reclaim_lapsed(now, limit)
  local lapsed = redis.call('ZRANGEBYSCORE', K.leased, '-inf', now, 'LIMIT', 0, limit)
  local requeued, dead = 0, 0
  for _, id in ipairs(lapsed) do
    local m = load_meta(id)
    if m then
      -- The holder as `redq workers` lists it and `workers stop` takes it.
      local why = 'lease expired (held by worker ' .. m[M.worker_node] ..
        '-' .. m[M.worker_instance] .. ')'
      local delay = reclaim_delay(m)
      if fail_attempt(id, m, now, why, false, delay, 0) then dead = dead + 1 else requeued = requeued + 1 end
      count_outcome(m[M.name], MV.reclaimed, now)
    else
      redis.call('ZREM', K.leased, id)
    end
  end
  if requeued + dead > 0 then
    emit(K.events, 'reclaimed', QUEUE, now, 'count', requeued + dead, 'detail', requeued .. ' requeued, ' .. dead .. ' dead')
  end
  if dead > 0 then bound_dead(now) end
  return requeued, dead
end
