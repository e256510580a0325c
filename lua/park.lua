#!lua flags=allow-oom
-- park.lua: an idle worker parks on a queue so the next enqueue hands it
-- work directly (see enqueue.lua), instead of waking it to claim.
--
-- allow-oom: a small record that keeps an idle worker responsive.
-- Answers what next_due.lua answers, and parks only when nothing is due now.
-- One worker at most is parked on a queue (others sleep on the wake-up
-- channel as before); a park expires by itself, so a worker that died parked
-- is handed at most `capacity` jobs, which come back when their leases lapse.
--
-- include: check keys due parked
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  paused, fifo, waiting, ord_ready, scheduled, leased
--   writes parked
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] token (decimal, unique to the worker; its hand-off channel is the
--         wake-up channel .. ':' .. token)
-- ARGV[4] worker node (decimal u64)   ARGV[5] worker instance (u32)
-- ARGV[6] lease_ms (1..MAX_MS)        ARGV[7] capacity (1..1000)
-- ARGV[8] park_ms: how long the park lasts (1..MAX_MS)
-- Reply: { ms until due (0 = now, -1 = nothing pending), 1 parked / 0 not }
queue_name(QUEUE)
local token = decimal_u64(ARGV[3], 'park token')
local node = decimal_u64(ARGV[4], 'worker node')
local instance = uint(ARGV[5], 'worker instance', MAX_U32)
local lease_ms = uint(ARGV[6], 'lease_ms', MAX_MS)
local capacity = uint(ARGV[7], 'park capacity', 1000)
local park_ms = uint(ARGV[8], 'park_ms', MAX_MS)
if lease_ms < 1 then fail('lease_ms must be at least 1') end
if capacity < 1 then fail('park capacity must be at least 1') end
if park_ms < 1 then fail('park_ms must be at least 1') end

-- A paused queue is handed nothing, so a worker does not park on it.
if redis.call('SISMEMBER', K.paused, QUEUE) == 1 then return { -1, 0 } end
local soonest = due_in_ms()
if soonest == 0 then return { 0, 0 } end

local current = parked_read()
if current and current.token ~= token then return { soonest, 0 } end
redis.call('SET', K.parked, parked_format({
  token = token, node = node, instance = instance, lease_ms = lease_ms,
  capacity = capacity, handed = 0,
}), 'PX', park_ms)
return { soonest, 1 }
