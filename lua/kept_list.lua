#!lua flags=no-writes,allow-oom
-- kept_list.lua: one page of a queue's kept finished jobs, newest first.
-- include: check clock keys
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  kept, completed, cancelled
--   writes nothing
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] outcome (completed | cancelled)
-- ARGV[4] offset       ARGV[5] count (1..1000)
-- Reply: { total, now_ms, id1, kept record1, id2, kept record2, ... }
-- (lib/kept_record.lua); an id whose record is gone is skipped.
queue_name(QUEUE)
local index = ({ completed = K.completed, cancelled = K.cancelled })[ARGV[3]]
if not index then fail('outcome must be completed or cancelled; got ' .. tostring(ARGV[3])) end
local offset = uint(ARGV[4], 'offset', MAX_U32)
local count = uint(ARGV[5], 'count', 1000)
local reply = { redis.call('ZCARD', index), now_ms() }
if count == 0 then return reply end
local ids = redis.call('ZREVRANGE', index, offset, offset + count - 1)
if #ids == 0 then return reply end
local raws = redis.call('HMGET', K.kept, unpack(ids))
for i, id in ipairs(ids) do
  if raws[i] then
    reply[#reply + 1] = id
    reply[#reply + 1] = raws[i]
  end
end
return reply
