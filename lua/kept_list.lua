#!lua flags=no-writes,allow-oom
-- kept_list.lua: one page of a queue's kept finished jobs, newest first.
-- A kept job past the queue's age bound is neither listed nor counted, on
-- Redis's clock now (lib/kept_record.lua kept_expired), though the queue's
-- next trim has not freed it yet.
-- include: check clock keys kept_record retention_spec
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  kept, completed, cancelled, retention
--   writes nothing
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] outcome (completed | cancelled)
-- ARGV[4] offset       ARGV[5] count (1..1000)
-- Reply: { total, now_ms, id1, kept record1, id2, kept record2, ... }
-- (lib/kept_record.lua); total counts those within the age bound; an id
-- whose record is gone is skipped.
queue_name(QUEUE)
local index = ({ completed = K.completed, cancelled = K.cancelled })[ARGV[3]]
if not index then fail('outcome must be completed or cancelled; got ' .. tostring(ARGV[3])) end
local offset = uint(ARGV[4], 'offset', MAX_U32)
local count = uint(ARGV[5], 'count', 1000)
local now = now_ms()
local since = kept_range_min(retention_policy(), now)
local reply = { redis.call('ZCOUNT', index, since, '+inf'), now }
if count == 0 then return reply end
local ids = redis.call('ZREVRANGEBYSCORE', index, '+inf', since, 'LIMIT', offset, count)
if #ids == 0 then return reply end
local raws = redis.call('HMGET', K.kept, unpack(ids))
for i, id in ipairs(ids) do
  if raws[i] then
    reply[#reply + 1] = id
    reply[#reply + 1] = raws[i]
  end
end
return reply
