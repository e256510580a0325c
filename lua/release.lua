#!lua flags=allow-oom
-- release.lua: give a leased job back unrun, without counting an attempt
-- (graceful shutdown: the job is due again at once, at its old position).
--
-- The lease's end frees the slot of the job's limit key (lib/flow.lua); a
-- keyed job is held again by its key.
-- Push-back (a remote said "too many requests"): with ARGV[5], the job's
-- limiter (its limit key, or the queue when it has none) starts nothing for
-- pushback_ms (the later of an existing push-back and this one wins), and the
-- queue becomes flow-aware. The job itself is released as without it, and a
-- pushed_back event (on the traffic stream, K.traffic: a storm of 429s is
-- the queue's traffic, and must not trim an incident's events off K.events)
-- names the job, its limiter, how long and until when, and the worker. No
-- cap: a push-back is the remote's "not now", not a failed attempt, so it
-- counts no attempt and spends no retry window; the events and the
-- limiter's push-back in redq limits list show a job pushed back for ever.
-- A lost hand-off: with ARGV[5] = handoff_lost, a worker gives back a job
-- handed to it whose message it never heard (driver/src/worker/unheard.rs).
-- The release is the same; a handoff_lost event tells an operator, since a
-- lost hand-off means the worker's subscription broke or lagged, and the
-- queue's count of them (K.metrics' handoffs_lost field, lib/metrics.lua)
-- goes up by one, for an alert (redq metrics' redq_handoffs_lost_total).
-- A lost claim: with ARGV[5] = claim_lost, a worker gives back a job a claim
-- of its own leased whose reply never reached it (driver/src/lost_claim.rs).
-- The release is the same; a claim_lost event tells an operator of the
-- connection trouble behind it, and the queue's count of them (K.metrics'
-- claims_lost field) goes up by one (redq_claims_lost_total).
-- A shutdown: with ARGV[5] = interrupted (the worker's grace period ended
-- while the job ran: its handler was stopped mid-run) or stopped (its
-- handler stopped early for the shutdown, JobError::stopped), a worker gives
-- back a job it was running as it stops. The release is the same; a
-- given_back event says why and names the worker, so that an operator who
-- sees the job run again (an interrupted one, from its start) knows why.
-- Nothing is counted: a deploy gives jobs back, it is not an alarm.
-- include: check clock keys job_store lease waiting flow notify events
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  limits, lim_starts
--   writes jobs, leased, waiting, limits (push-back), lim, lim_held, lim_ready, lim_wake,
--          traffic (a push-back), events and metrics (a lost hand-off or claim)
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] job id       ARGV[4] lease id (0 = whatever lease is current)
-- ARGV[5] (optional) pushback_ms (1..86400000), handoff_lost, claim_lost,
--   interrupted or stopped
-- Events: handoff_lost or claim_lost (id, name, detail: the worker it was
--   leased to, as the registry names it) when ARGV[5] says so and the job
--   was released. given_back (id, name, detail: why, then the worker) for
--   interrupted or stopped. pushed_back (id, name, detail: "key K" or "queue", then
--   "for N ms until HH:MM:SS.mmm UTC" on the Redis clock, then the worker)
--   on K.traffic when ARGV[5] is a push-back and the job was released.
-- Reply: code
-- code 1 released: the job is due again at once, no attempt counted
-- code 2 already_released: an earlier send released it under this lease; nothing changed
-- code -1 lease_lost: the job is not held under this lease; nothing changed
-- The resolved lease is recorded negated (-lease id), so that a resent
-- release is recognised while a later nack under the same lease is not
-- mistaken for a resent nack (nack.lua records the positive id).
queue_name(QUEUE)
local id = text(ARGV[3], 'job id', 64)
local lease = uint(ARGV[4], 'lease id', 9007199254740991)
-- Why a shutdown gave a job back, as its given_back event says it.
local SHUTDOWN = {
  interrupted = 'interrupted at the end of its worker\'s shutdown grace period',
  stopped = 'stopped by its handler for its worker\'s shutdown',
}
local pushback, lost, shutdown
if ARGV[5] == 'handoff_lost' or ARGV[5] == 'claim_lost' then
  lost = ARGV[5]
elseif SHUTDOWN[ARGV[5]] then
  shutdown = SHUTDOWN[ARGV[5]]
elseif ARGV[5] then
  if not string.match(ARGV[5], '^%d+$') then
    fail('the fifth argument must be pushback_ms (1 to 86400000), handoff_lost, claim_lost, '
      .. 'interrupted or stopped, got ' .. string.format('%q', ARGV[5]))
  end
  pushback = uint(ARGV[5], 'pushback_ms', 86400000)
  if pushback < 1 then fail('pushback_ms must be 1 to 86400000, got 0') end
end
local m = load_meta(id)
if not m or m[M.queue] ~= QUEUE then return -1 end
if lease ~= 0 and m[M.resolved_lease] == -lease then return 2 end
if not lease_matches(m, lease) then return -1 end
local now = now_ms()
local worker = (lost or pushback or shutdown) and
  m[M.worker_node] .. '-' .. string.format('%d', m[M.worker_instance])
if lost then
  -- Counted whether the queue's metrics are on or off: it costs nothing a
  -- job, and it is an alarm, not a figure of the work (the fields:
  -- driver/src/metrics/layout.rs).
  if lost == 'handoff_lost' then
    emit(K.events, 'handoff_lost', QUEUE, now, 'id', id, 'name', m[M.name], 'detail', worker)
    redis.call('HINCRBY', K.metrics, 'handoffs_lost', 1)
  else
    emit(K.events, 'claim_lost', QUEUE, now, 'id', id, 'name', m[M.name], 'detail', worker)
    redis.call('HINCRBY', K.metrics, 'claims_lost', 1)
  end
elseif shutdown then
  emit(K.events, 'given_back', QUEUE, now, 'id', id, 'name', m[M.name], 'detail',
    shutdown .. ', worker ' .. worker)
end
m[M.resolved_lease] = -m[M.lease_id]
clear_lease(m)
m[M.not_before] = now -- due again now: the next claim's wait counts from here
store_meta(id, m)
redis.call('ZREM', K.leased, id)
if pushback then push_back(m[M.limit_key], now + pushback) end
free_slot(m, now)
place(id, m, now, now)
wake_workers(QUEUE)
if pushback then
  local key = m[M.limit_key]
  local untl = now + pushback
  local day = math.floor(untl / 1000) % 86400
  local limiter = key == '' and 'queue' or ('key ' .. key)
  emit(K.traffic, 'pushed_back', QUEUE, now, 'id', id, 'name', m[M.name], 'detail',
    string.format('%s for %d ms until %02d:%02d:%02d.%03d UTC, worker %s', limiter, pushback,
      math.floor(day / 3600), math.floor(day / 60) % 60, day % 60, untl % 1000, worker))
end
return 1
