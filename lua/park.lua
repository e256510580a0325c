#!lua flags=allow-oom
-- park.lua: an idle worker parks on a queue so the next enqueue hands it
-- work directly (see enqueue.lua), instead of waking it to claim.
--
-- allow-oom: a small record that keeps an idle worker responsive.
-- Answers what next_due.lua answers, and parks the worker. Jobs waiting
-- now are handed to it at once, as an enqueue hands a job to a parked
-- worker (lib/handoff.lua), up to its capacity: a worker that parks while
-- jobs arrive no slower than its claim, park and claim again take (a steady
-- trickle) would otherwise find one waiting at every park, be refused, claim
-- it and try again, and never be handed a job. A flow-aware queue hands
-- nothing off (its claim weighs the limits), so with work due there the
-- worker is not parked and claims.
-- One worker at most is parked on a queue (others sleep on the wake-up
-- channel as before); a park expires by itself, so a worker that died parked
-- is handed at most `capacity` jobs, which come back when their leases lapse.
--
-- include: check clock keys due parked handoff
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  paused, fifo, waiting, ord_ready, scheduled, leased, limits
--          lease_seq
--   writes parked; publishes on the worker's hand-off channel; with jobs
--          waiting, what a hand-off writes (lib/handoff.lua)
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] token (decimal, unique to the worker; its hand-off channel is the
--         wake-up channel .. ':' .. token)
-- ARGV[4] worker node (decimal u64)   ARGV[5] worker instance (u32)
-- ARGV[6] lease_ms (1..MAX_MS)        ARGV[7] capacity (1..1000)
-- ARGV[8] park_ms: how long the park lasts (1..MAX_MS)
-- ARGV[9] park number (decimal u64, the worker's count of its parks)
-- ARGV[10] '1' when the worker hears shard channels (SSUBSCRIBE), else '0' or none:
--         what its hand-offs are published as (lib/parked.lua)
-- Reply: { ms until due (0 = now, -1 = nothing pending), 1 parked / 0 not },
-- and when parked, the lease sequence and the clock (ms) before any hand-off:
-- every job handed to this park is leased above that sequence and expires
-- lease_ms after that time or later (handed_unheard.lua).
-- parked with 0, the park's room did not take every waiting job.
-- Parked, it publishes "parked <number>" on the worker's hand-off channel,
-- before any job it hands. Nothing waits unhanded when it parks, so every
-- wake-up published before it (and delivered before it: one channel's
-- messages, and the wake-up channel's on the same connection, arrive in
-- publish order) concerns work the worker has claimed or been handed; the
-- worker heeds only those after it.
queue_name(QUEUE)
local token = decimal_u64(ARGV[3], 'park token')
local node = decimal_u64(ARGV[4], 'worker node')
local instance = uint(ARGV[5], 'worker instance', MAX_U32)
local lease_ms = uint(ARGV[6], 'lease_ms', MAX_MS)
local capacity = uint(ARGV[7], 'park capacity', 1000)
local park_ms = uint(ARGV[8], 'park_ms', MAX_MS)
local number = decimal_u64(ARGV[9], 'park number')
local shard = ARGV[10] ~= nil and uint(ARGV[10], 'shard channels flag', 1) == 1
if lease_ms < 1 then fail('lease_ms must be at least 1') end
if capacity < 1 then fail('park capacity must be at least 1') end
if park_ms < 1 then fail('park_ms must be at least 1') end

-- A paused queue is handed nothing, so a worker does not park on it.
if redis.call('SISMEMBER', K.paused, QUEUE) == 1 then return { -1, 0 } end
local soonest = due_in_ms()
if soonest == 0 and flow_spec() then return { 0, 0 } end

local current = parked_read()
if current and current.token ~= token then return { soonest, 0 } end
local parked = parked_format({
  token = token, node = node, instance = instance, lease_ms = lease_ms,
  capacity = capacity, shard = shard, handed = 0,
})
redis.call('SET', K.parked, parked, 'PX', park_ms)
tell_parked(handoff_channel(token), shard, 'parked ' .. number)
local lease_seq = redis.call('GET', K.lease_seq) or '0'
local now = now_ms()
if soonest == 0 then
  -- Handed what waits; what its room did not take (or a released ordering
  -- successor, which only a claim takes) is due still.
  if hand_off(parked, now) then return { 0, 1, lease_seq, now } end
  soonest = due_in_ms()
end
return { soonest, 1, lease_seq, now }
