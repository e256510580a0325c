#!lua flags=allow-oom
-- requeue_dead.lua: move dead letters back to their queue with their attempt
-- counter set to ARGV[4], usually 0 (seed op RequeueDeadLetter). Either the listed ids, or, with no ids, up
-- to `limit` of the queue's oldest dead letters: callers loop for "all".
-- A requeued job goes to the back of its priority, waits behind the holder of
-- its ordering key if another job holds it, and does not reclaim its dedup
-- key (a newer job may hold it now). A requeued job with a limit key is held
-- by its key (lib/flow.lua) like any due keyed job.
-- include: check clock keys job_store ordering events notify
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  limits, lim_starts
--   writes dead, jobs, seq, waiting, ord_active, ord_blocked, ord_blocked_n,
--          lim, lim_held, lim_ready, lim_wake, events
-- ARGV[1] queue name   ARGV[2] wake-up channel   ARGV[3] limit (1..1000)
-- ARGV[4] attempts: the counter each requeued job restarts at (a job whose
--         max_attempts is not above it gets one more try)
-- ARGV[5..] job ids (at most `limit`)
-- last ARGV, optional: the operator's actor, marked (lib/events.lua: ARGC leaves it out)
-- Reply: { requeued, not_dead (ids that were not dead letters of this queue), dead_left }
queue_name(QUEUE)
local limit = uint(ARGV[3], 'requeue limit', 1000)
if limit < 1 then fail('requeue limit must be at least 1') end
local attempts = uint(ARGV[4], 'attempts', MAX_U32)
local ids = {}
for i = 5, ARGC do ids[#ids + 1] = text(ARGV[i], 'job id', 64) end
if #ids > limit then fail('at most ' .. limit .. ' ids per call, got ' .. #ids) end
if #ids == 0 then ids = redis.call('ZRANGE', K.dead, 0, limit - 1) end
local now = now_ms()
local requeued, missing, wake = 0, 0, false
for _, id in ipairs(ids) do
  local m = redis.call('ZSCORE', K.dead, id) and load_meta(id)
  if m then
    redis.call('ZREM', K.dead, id)
    m[M.attempts] = attempts
    m[M.died_at] = 0
    m[M.resolved_lease] = 0
    m[M.seq] = redis.call('INCR', K.seq)
    m[M.not_before] = now -- due again now: the next claim's wait counts from here
    store_meta(id, m)
    if admit(id, m, now, now) then wake = true end
    requeued = requeued + 1
  else
    missing = missing + 1
  end
end
if wake then wake_workers(QUEUE) end
-- The event says where the jobs' attempts restart: an operator reading it
-- later must not take a requeue at 2 of 3 for a fresh start.
if requeued == 1 and #ids == 1 then
  emit(K.events, 'requeued', QUEUE, now, 'count', '1', 'id', ids[1], 'attempts', attempts)
elseif requeued > 0 then emit(K.events, 'requeued', QUEUE, now, 'count', requeued, 'attempts', attempts) end
return { requeued, missing, redis.call('ZCARD', K.dead) }
