#!lua
-- schedule_delete.lua: remove a schedule. Jobs it already enqueued stay.
--
-- KEYS here are not the queue key list: deleting touches no queue.
-- include: check clock schedule_record events
-- KEYS[1] {ns}:schedules        hash  name -> schedule record (lib/schedule_record.lua); writes
-- KEYS[2] {ns}:schedules:next   zset  name -> next run (unix ms); writes
-- KEYS[3] {ns}:events           stream the event stream (lib/events.lua); writes
-- ARGV[1] schedule name
-- ARGV[2] 0 = delete; 1 = only drop a next-run entry that has no record (a
--         scheduler cleaning up after a foreign writer; a schedule upserted
--         meanwhile is left alone)
-- last ARGV, optional: the operator's actor, marked (lib/events.lua: ARGC leaves it out)
-- Events: schedule_deleted (id the schedule, queue its queue) when a
-- schedule was deleted; an orphan's cleanup is no one's action and writes none.
--
-- Reply: code
-- code 1 deleted: the schedule is gone
-- code 0 missing: no such schedule (or, with ARGV[2] = 1, not an orphan)
-- Errors (nothing written): "ERR redq: ..." naming the bad argument.
local SCHEDULES, NEXT, EVENTS = KEYS[1], KEYS[2], KEYS[3]

if ARGC ~= 2 then fail('expected 2 arguments, got ' .. ARGC) end
local name = text(ARGV[1], 'schedule name', 128)
local orphans_only = uint(ARGV[2], 'orphans-only flag', 1)

if orphans_only == 1 then
  if redis.call('HEXISTS', SCHEDULES, name) == 1 then return 0 end
  return redis.call('ZREM', NEXT, name)
end
local raw = redis.call('HGET', SCHEDULES, name)
redis.call('ZREM', NEXT, name)
if not raw then return 0 end
redis.call('HDEL', SCHEDULES, name)
-- Its queue, for the event, from the record gone; a record that does not
-- decode is deleted all the same (the event then names no queue).
local ok, s = pcall(cmsgpack.unpack, raw)
local queue = ok and type(s) == 'table' and type(s[S.queue]) == 'string' and s[S.queue] or ''
emit(EVENTS, 'schedule_deleted', queue, now_ms(), 'id', name)
return 1
