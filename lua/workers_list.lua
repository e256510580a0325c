#!lua flags=no-writes,allow-oom
-- workers_list.lua: the live workers: those whose last heartbeat is younger
-- than ttl_ms on the Redis clock.
-- include: check clock
-- KEYS[1] {ns}:workers        zset  worker id -> last heartbeat (unix ms); reads
-- KEYS[2] {ns}:workers:info   hash  worker id -> JSON record; reads
-- ARGV[1] ttl_ms   ARGV[2] most workers to return (1..10000)
-- Reply: { now_ms, id1, heartbeat1, record1, ... }
local workers, info = KEYS[1], KEYS[2]
local ttl = uint(ARGV[1], 'ttl_ms', MAX_MS)
local limit = uint(ARGV[2], 'limit', 10000)
local now = now_ms()
local reply = { now }
local live = redis.call('ZRANGEBYSCORE', workers, now - ttl, '+inf', 'WITHSCORES', 'LIMIT', 0, limit)
for i = 1, #live, 2 do
  reply[#reply + 1] = live[i]
  reply[#reply + 1] = live[i + 1]
  reply[#reply + 1] = redis.call('HGET', info, live[i]) or ''
end
return reply
