#!lua flags=no-writes,allow-oom
-- list_jobs.lua: one page of a queue's jobs in one state.
-- waiting: claim order; scheduled: soonest due first; leased: soonest expiry
-- first; dead: newest first.
-- KEYS: the common queue key list (lua/lib.lua).
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] state (waiting | scheduled | leased | dead)
-- ARGV[4] offset       ARGV[5] count (1..1000)
-- Reply: { total, now_ms, id1, score1, meta1, payload1, ... }
queue_name(QUEUE)
local state = ARGV[3]
local offset = uint(ARGV[4], 'offset', MAX_U32)
local count = uint(ARGV[5], 'count', 1000)
local key = ({ waiting = K.waiting, scheduled = K.scheduled, leased = K.leased, dead = K.dead })[state]
if not key then fail('state must be one of waiting, scheduled, leased, dead; got ' .. tostring(state)) end
local reply = { redis.call('ZCARD', key), now_ms() }
if count == 0 then return reply end
local page
if state == 'dead' then
  page = redis.call('ZREVRANGE', key, offset, offset + count - 1, 'WITHSCORES')
else
  page = redis.call('ZRANGE', key, offset, offset + count - 1, 'WITHSCORES')
end
for i = 1, #page, 2 do
  local id = page[i]
  reply[#reply + 1] = id
  reply[#reply + 1] = page[i + 1]
  reply[#reply + 1] = redis.call('HGET', K.jobs, id) or ''
  reply[#reply + 1] = redis.call('HGET', K.payloads, id) or ''
end
return reply
