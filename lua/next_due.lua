#!lua flags=no-writes,allow-oom
-- next_due.lua: how long until a job of this queue is due for claiming.
-- Counts waiting jobs and released ordering successors (due now), scheduled
-- jobs and retries (due at their time) and leases (due for reclaim at their
-- expiry, so an idle worker wakes to recover a crashed peer's jobs).
-- A paused queue has nothing due.
-- KEYS: the common queue key list (lua/lib.lua).
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- Reply: milliseconds until due (0 = now), or -1 when nothing is pending.
queue_name(QUEUE)
if redis.call('SISMEMBER', K.paused, QUEUE) == 1 then return -1 end
if redis.call('ZCARD', K.waiting) > 0 then return 0 end
if redis.call('ZLEXCOUNT', K.ord_ready, '[' .. QUEUE .. '\n', '(' .. QUEUE .. '\11') > 0 then return 0 end
local now = now_ms()
local soonest = -1
for _, key in ipairs({ K.scheduled, K.leased }) do
  local head = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if head[2] then
    local wait = math.max(0, tonumber(head[2]) - now)
    if soonest < 0 or wait < soonest then soonest = wait end
  end
end
return soonest
