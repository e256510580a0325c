#!lua
-- schedule_delete.lua: remove a schedule. Jobs it already enqueued stay.
--
-- KEYS here are not the queue key list: deleting touches no queue.
-- include: check
-- KEYS[1] {ns}:schedules        hash  name -> schedule record (lib/schedule_record.lua); writes
-- KEYS[2] {ns}:schedules:next   zset  name -> next run (unix ms); writes
-- ARGV[1] schedule name
-- ARGV[2] 0 = delete; 1 = only drop a next-run entry that has no record (a
--         scheduler cleaning up after a foreign writer; a schedule upserted
--         meanwhile is left alone)
--
-- Reply: code
-- code 1 deleted: the schedule is gone
-- code 0 missing: no such schedule (or, with ARGV[2] = 1, not an orphan)
-- Errors (nothing written): "ERR redq: ..." naming the bad argument.
local SCHEDULES, NEXT = KEYS[1], KEYS[2]

if #ARGV ~= 2 then fail('expected 2 arguments, got ' .. #ARGV) end
local name = text(ARGV[1], 'schedule name', 128)
local orphans_only = uint(ARGV[2], 'orphans-only flag', 1)

if orphans_only == 1 then
  if redis.call('HEXISTS', SCHEDULES, name) == 1 then return 0 end
  return redis.call('ZREM', NEXT, name)
end
local removed = redis.call('HDEL', SCHEDULES, name)
redis.call('ZREM', NEXT, name)
return removed
