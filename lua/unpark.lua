#!lua flags=allow-oom
-- unpark.lua: a parked worker (park.lua) leaves: no more hand-offs to it.
--
-- allow-oom: deleting frees memory.
-- Publishes "fence" on the worker's hand-off channel after removing the
-- park. Redis delivers a channel's messages in order, so once the worker
-- reads the fence it has every job handed to it (then it can release what it
-- will not run, e.g. at shutdown).
--
-- include: check keys parked
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  nothing else
--   writes parked
-- ARGV[1] queue name   ARGV[2] wake-up channel   ARGV[3] token
-- ARGV[4] '1' when the worker hears shard channels, else '0' or none (as it parked)
-- Reply: jobs handed to this park; -1 when the park was not (or no longer)
-- this worker's.
queue_name(QUEUE)
local token = decimal_u64(ARGV[3], 'park token')
local shard = ARGV[4] ~= nil and uint(ARGV[4], 'shard channels flag', 1) == 1
local p = parked_read()
local handed = -1
if p and p.token == token then
  handed = p.handed
  redis.call('DEL', K.parked)
end
tell_parked(handoff_channel(token), shard, 'fence')
return handed
