#!lua flags=no-writes,allow-oom
-- schedule_due.lua: the schedules whose next run has come, for a scheduler.
--
-- KEYS here are not the queue key list: reading touches no queue.
-- include: check clock
-- KEYS[1] {ns}:schedules        hash  name -> schedule record (lib/schedule_record.lua); reads
-- KEYS[2] {ns}:schedules:next   zset  name -> next run (unix ms); reads
-- ARGV[1] limit: at most this many due schedules (1..1000), oldest next run first
--
-- Reply: { now_ms, earliest_next_ms (-1 = no schedule has a next run),
--          name1, next1, record1 ("" when missing), name2, ... }
--   earliest_next_ms is the soonest next run of all, due or not, so a
--   scheduler with nothing due knows how long it may sleep.
local SCHEDULES, NEXT = KEYS[1], KEYS[2]

if #ARGV ~= 1 then fail('expected 1 argument, got ' .. #ARGV) end
local limit = uint(ARGV[1], 'limit', 1000)
if limit == 0 then fail('limit must be at least 1') end

local now = now_ms()
local first = redis.call('ZRANGE', NEXT, 0, 0, 'WITHSCORES')
local reply = { now, -1 }
if first[2] then reply[2] = tonumber(first[2]) end
local due = redis.call('ZRANGEBYSCORE', NEXT, '-inf', now, 'WITHSCORES', 'LIMIT', 0, limit)
for i = 1, #due, 2 do
  reply[#reply + 1] = due[i]
  reply[#reply + 1] = tonumber(due[i + 1])
  reply[#reply + 1] = redis.call('HGET', SCHEDULES, due[i]) or ''
end
return reply
