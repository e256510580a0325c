#!lua flags=allow-oom
-- gate_decide.lua: an operator decides a held waiter (lua/README.md,
-- Workflows): one whose gate finished with a failed member and whose policy
-- is hold. release: it enters its queue through admit(), as if its members
-- had all succeeded; dead: it is dead-lettered with the gate's first
-- failure. The decision (operator_released | operator_failed) is written
-- into its gate's record. Runs in the waiter's queue.
-- include: check clock keys job_record job_store gate_record gate gate_decide events notify
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  jobs, wf_gates, wf_awaiting, ord_active, limits,
--          retention (a dead decision: the dead-letter bound, lib/dead_bound.lua)
--   writes jobs, detached, fifo, waiting, scheduled, dead, ord_active, ord_blocked, ord_blocked_n,
--          lim, lim_held, lim_ready, lim_wake, dedup, events, wf_gates, wf_awaiting,
--          wf_awaiting_n, wf_members, wf_outcomes, wf_of, wf_expire, ord_ready,
--          progress, logs (the trim of a queue with a dead-letter bound)
-- ARGV[1] queue name (the waiter's)   ARGV[2] wake-up channel
-- ARGV[3] waiter job id   ARGV[4] release | dead
-- ARGV[5] by: who decides (text, at most 128 bytes, '' = not given)
-- last ARGV, optional: the operator's actor, marked (lib/events.lua: ARGC leaves it out)
-- Reply: { code } or { code, decision }:
-- code 1 decided: the waiter was released or dead-lettered now
-- code 0 not_found: no job with this id in this queue waits on a gate
-- code -1 not_held: the waiter is not held; its current decision follows ('' = undecided)
-- code 2 not_waiting: the job is in this queue but waits on no gate (never did, or no longer)
queue_name(QUEUE)
local id = text(ARGV[3], 'job id', 64)
if id == '' then fail('job id must not be empty') end
local action = ARGV[4]
if action ~= 'release' and action ~= 'dead' then
  fail('decision must be release or dead, got ' .. string.format('%q', tostring(action)))
end
local by = text(ARGV[5], 'decided by', 128)
if by ~= '' then BY = by end
local m = load_meta(id)
if not m or m[M.queue] ~= QUEUE then return { 0 } end
if m[M.awaits] == '' then return { 2 } end
local gid = m[M.awaits]
local g = wf.load(gid)
local decision = ''
if g then
  for _, w in ipairs(g[G.waiters]) do
    if w[GW.id] == id then decision = w[GW.decision] end
  end
end
if decision ~= 'held' or not wf.is_awaiting(id, m) then return { -1, decision } end
local now = now_ms()
if action == 'release' then
  wf.decided(gid, id, 'operator_released')
  if wf_waiter.release(id, m, now) then wake_workers(QUEUE) end
else
  wf.decided(gid, id, 'operator_failed')
  wf_waiter.dead_letter(id, m, 'dependency ' .. g[G.first_failure], now)
end
wf.trim(now)
return { 1 }
