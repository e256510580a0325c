#!lua flags=allow-oom
-- metrics_switch.lua: turn a queue's metrics (lib/metrics.lua) off or back
-- on, live. While they are off, the queue's claims, hand-offs, acks, nacks,
-- reclaims and cancels write nothing to its metrics hash (they still read
-- the switch, in the HMGET they read the name's window with): what is
-- recorded stays readable, and nothing new is added to it but the count of
-- lost hand-offs given back (release.lua), an alarm rather than a figure.
--
-- allow-oom: turning metrics off is one way out of a full Redis (the hash
-- grows with every new window); either way the write is one small field
-- and its event (about 100 bytes, as pause.lua's).
-- include: check clock keys events
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  metrics
--   writes metrics, events
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] off | on
-- last ARGV, optional: the operator's actor, marked (lib/events.lua: ARGC leaves it out)
-- Events: metrics_off / metrics_on (by), only when the switch changed.
-- Reply: { code, off_since }, off_since the Redis time (unix ms) the metrics
--   were turned off, 0 while they are on
-- code 1 changed: the metrics were on and are now off, or the other way
-- code 0 unchanged: they were already as asked; nothing written
-- The field's name is lib/metrics.lua's METRIC_OFF (a test of the driver,
-- driver/src/metrics/layout.rs, pins both to the same text).
queue_name(QUEUE)
local want = ARGV[3]
if want ~= 'off' and want ~= 'on' then
  fail('metrics can be turned off or on, got ' .. string.format('%q', tostring(want)))
end
-- lib/metrics.lua stops at the field whatever it holds, so its presence
-- is the switch (the time is for readers).
local stored = redis.call('HGET', K.metrics, 'off')
if want == 'off' then
  if stored then return { 0, tonumber(stored) or 0 } end
  local now = now_ms()
  redis.call('HSET', K.metrics, 'off', now)
  emit(K.events, 'metrics_off', QUEUE, now)
  return { 1, now }
end
if not stored then return { 0, 0 } end
redis.call('HDEL', K.metrics, 'off')
emit(K.events, 'metrics_on', QUEUE, now_ms())
return { 1, 0 }
