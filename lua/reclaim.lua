#!lua flags=allow-oom
-- reclaim.lua: return up to `limit` lapsed leases of a queue to it, due
-- after each job's reclaim backoff (lib/retry.lua), each counting a failed
-- attempt, dead-lettering those whose attempts or retry window are spent
-- (seed op Reclaim). claim.lua does the same inline; this is the bounded
-- call for janitors and operators.
-- include: check clock keys retry
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  limits, lim_starts, fifo (flow control, lib/flow.lua),
--          retention (when it dead-letters: the dead-letter bound, lib/dead_bound.lua)
--   writes jobs, leased, waiting, scheduled, dead, stats, events, dedup, ord_active,
--          ord_blocked, ord_ready, ord_blocked_n, lim, lim_held, lim_ready, lim_wake,
--          progress, logs, detached (the trim of a queue with a dead-letter bound)
-- ARGV[1] queue name   ARGV[2] wake-up channel   ARGV[3] limit (1..10000)
-- Reply: { requeued, dead_lettered, still_lapsed }
queue_name(QUEUE)
local limit = uint(ARGV[3], 'reclaim limit', 10000)
local now = now_ms()
local requeued, dead = reclaim_lapsed(now, limit)
return { requeued, dead, redis.call('ZCOUNT', K.leased, '-inf', now) }
