-- lib/due.lua: how long until a job of this queue is due for claiming, for
-- workers deciding how long to sleep (next_due.lua, park.lua).
-- include: keys clock waiting flow_spec flow_claim

-- The soonest score of the zsets `keys`, as ms from `at` (0 when past), or
-- `soonest` when none is sooner (-1 = none yet).
local function soonest_of(keys, at, soonest)
  for _, key in ipairs(keys) do
    local head = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    if head[2] then
      local wait = math.max(0, tonumber(head[2]) - at)
      if soonest < 0 or wait < soonest then soonest = wait end
    end
  end
  return soonest
end

-- A released ordering successor of this queue waits in ord:ready.
local function successors_wait()
  return redis.call('ZLEXCOUNT', K.ord_ready, '[' .. QUEUE .. '\n', '(' .. QUEUE .. '\11') > 0
end

-- Milliseconds until a job of this queue is due for claiming: 0 when one is
-- due now (waiting, or a released ordering successor), else the soonest of
-- the next scheduled job and the next lease expiry (due for reclaim), -1
-- when nothing is pending or the queue is paused.
-- A flow-aware queue (lib/flow.lua) is due now only when it has queue-wide
-- room and waiting jobs, ready keys or successors; blocked by its queue-wide
-- rate or push-back, at the time that ends; at its queue-wide concurrency,
-- at the next lease expiry (a lease's end wakes its workers); otherwise at
-- the soonest of scheduled jobs, lease expiries and keys' wake times.
local function due_in_ms()
  if redis.call('SISMEMBER', K.paused, QUEUE) == 1 then return -1 end
  local spec = flow_spec()
  if not spec then
    if any_waiting() or successors_wait() then return 0 end
    return soonest_of({ K.scheduled, K.leased }, now_ms(), -1)
  end
  local at = now_ms()
  local room, reopens = queue_room(spec, at)
  local work = flow_jobs_wait() or successors_wait()
  if work and room > 0 then return 0 end
  local soonest = soonest_of({ K.scheduled, K.leased, K.lim_wake }, at, -1)
  if work and reopens and (soonest < 0 or reopens - at < soonest) then soonest = reopens - at end
  return soonest
end
