#!lua flags=no-writes,allow-oom
-- schedule_list.lua: one page of all schedules, with their next runs.
-- A page is one HSCAN step, so a caller walks every schedule by passing the
-- returned cursor back until it is "0" (schedules added meanwhile may or may
-- not be seen; none present all along is missed).
--
-- KEYS here are not the queue key list: reading touches no queue.
-- include: check clock
-- KEYS[1] {ns}:schedules        hash  name -> schedule record (lib/schedule_record.lua); reads
-- KEYS[2] {ns}:schedules:next   zset  name -> next run (unix ms); reads
-- ARGV[1] cursor ("0" to start)
-- ARGV[2] count hint (1..1000)
--
-- Reply: { next_cursor, now_ms, name1, record1, next1 (-1 = none), name2, ... }
local SCHEDULES, NEXT = KEYS[1], KEYS[2]

if #ARGV ~= 2 then fail('expected 2 arguments, got ' .. #ARGV) end
local cursor = uint(ARGV[1], 'cursor', MAX_TIME_MS)
local count = uint(ARGV[2], 'count', 1000)
if count == 0 then fail('count must be at least 1') end

local page = redis.call('HSCAN', SCHEDULES, string.format('%d', cursor), 'COUNT', count)
local reply = { page[1], now_ms() }
local fields = page[2]
for i = 1, #fields, 2 do
  reply[#reply + 1] = fields[i]
  reply[#reply + 1] = fields[i + 1]
  reply[#reply + 1] = tonumber(redis.call('ZSCORE', NEXT, fields[i]) or '-1')
end
return reply
