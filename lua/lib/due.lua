-- lib/due.lua: how long until a job of this queue is due for claiming, for
-- workers deciding how long to sleep (next_due.lua, park.lua).
-- include: keys clock waiting

-- Milliseconds until a job of this queue is due for claiming: 0 when one is
-- due now (waiting, or a released ordering successor), else the soonest of
-- the next scheduled job and the next lease expiry (due for reclaim), -1
-- when nothing is pending or the queue is paused.
local function due_in_ms()
  if redis.call('SISMEMBER', K.paused, QUEUE) == 1 then return -1 end
  if waiting_count() > 0 then return 0 end
  if redis.call('ZLEXCOUNT', K.ord_ready, '[' .. QUEUE .. '\n', '(' .. QUEUE .. '\11') > 0 then
    return 0
  end
  local at = now_ms()
  local soonest = -1
  for _, key in ipairs({ K.scheduled, K.leased }) do
    local head = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    if head[2] then
      local wait = math.max(0, tonumber(head[2]) - at)
      if soonest < 0 or wait < soonest then soonest = wait end
    end
  end
  return soonest
end
