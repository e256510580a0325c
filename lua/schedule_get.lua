#!lua flags=no-writes,allow-oom
-- schedule_get.lua: one schedule's record and next run, with Redis's clock
-- (the driver computes next runs from that clock, never its own).
--
-- KEYS here are not the queue key list: reading touches no queue.
-- include: check clock
-- KEYS[1] {ns}:schedules        hash  name -> schedule record (lib/schedule_record.lua); reads
-- KEYS[2] {ns}:schedules:next   zset  name -> next run (unix ms); reads
-- ARGV[1] schedule name
--
-- Reply: { now_ms, record ("" when no such schedule), next_ms (-1 = none) }
local SCHEDULES, NEXT = KEYS[1], KEYS[2]

if #ARGV ~= 1 then fail('expected 1 argument, got ' .. #ARGV) end
local name = text(ARGV[1], 'schedule name', 128)
return {
  now_ms(),
  redis.call('HGET', SCHEDULES, name) or '',
  tonumber(redis.call('ZSCORE', NEXT, name) or '-1'),
}
