#!lua
-- limits_wake.lua: the rest of limits_set.lua's re-check: up to 1000 more of
-- Q's keys with held jobs (an HSCAN of K.lim from `cursor`) are put due for
-- a re-check now (K.lim_wake), so a changed limit applies to every key at
-- once; call again with the reply while it is not "0" (lib/flow.lua).
-- include: check clock keys notify
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  lim
--   writes lim_wake
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] cursor (an HSCAN cursor from limits_set.lua or this script; decimal)
-- Reply: the next cursor ("0" = done)
local WAKE_SCAN = 1000
queue_name(QUEUE)
local cursor = decimal_u64(ARGV[3], 'cursor')
local now = now_ms()
local scan = redis.call('HSCAN', K.lim, cursor, 'MATCH', 'h\n*', 'COUNT', WAKE_SCAN)
for i = 1, #scan[2], 2 do
  redis.call('ZADD', K.lim_wake, now, string.sub(scan[2][i], 3))
end
if #scan[2] > 0 then wake_workers(QUEUE) end
return scan[1]
