#!lua flags=allow-oom
-- unpark.lua: a parked worker (park.lua) leaves: no more hand-offs to it.
--
-- allow-oom: deleting frees memory.
-- Publishes "fence <park number>" on the worker's hand-off channel after
-- removing the park. Redis delivers a channel's messages in order, so once
-- the worker reads the fence it has every job handed to it that reached it
-- (then it can release what it will not run, e.g. at shutdown, and look for
-- what never reached it: handed_unheard.lua).
--
-- include: check clock keys parked
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  lease_seq
--   writes parked
-- ARGV[1] queue name   ARGV[2] wake-up channel   ARGV[3] token
-- ARGV[4] '1' when the worker hears shard channels, else '0' (as it parked)
-- ARGV[5] the park's number (decimal u64, as park.lua had it)
-- Reply: { jobs handed to this park, -1 when the park was not (or no longer)
-- this worker's; the lease sequence; the clock (ms) }: every job the park
-- handed is leased at or below that sequence and expires lease_ms after
-- that time or sooner (handed_unheard.lua).
queue_name(QUEUE)
local token = decimal_u64(ARGV[3], 'park token')
local shard = uint(ARGV[4], 'shard channels flag', 1) == 1
local number = decimal_u64(ARGV[5], 'park number')
local p = parked_read()
local handed = -1
if p and p.token == token then
  handed = p.handed
  redis.call('DEL', K.parked)
end
tell_parked(handoff_channel(token), shard, 'fence ' .. number)
return { handed, redis.call('GET', K.lease_seq) or '0', now_ms() }
