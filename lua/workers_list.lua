#!lua flags=no-writes,allow-oom
-- workers_list.lua: the live workers (last heartbeat younger than ttl_ms on
-- the Redis clock), then the gone ones: silent for ttl_ms but for less than
-- ttl_ms + gone_kept_ms, whether a later heartbeat of another worker already
-- moved them to the gone set or (no worker beating any more) not yet.
-- include: check clock
-- KEYS[1] {ns}:workers        zset  worker id -> last heartbeat (unix ms); reads
-- KEYS[2] {ns}:workers:info   hash  worker id -> JSON record; reads
-- KEYS[3] {ns}:workers:gone   zset  worker id -> last heartbeat of a lost worker; reads
-- ARGV[1] ttl_ms   ARGV[2] most workers to return of each kind (1..10000)
-- ARGV[3] gone_kept_ms
-- Reply: { now_ms, id1, heartbeat1, record1, gone1 (0 live, 1 gone), ... }
local workers, info, gone_set = KEYS[1], KEYS[2], KEYS[3]
local ttl = uint(ARGV[1], 'ttl_ms', MAX_MS)
local limit = uint(ARGV[2], 'limit', 10000)
local kept = uint(ARGV[3], 'gone_kept_ms', MAX_MS)
local now = now_ms()
local reply = { now }
local function add(entries, gone)
  for i = 1, #entries, 2 do
    reply[#reply + 1] = entries[i]
    reply[#reply + 1] = entries[i + 1]
    reply[#reply + 1] = redis.call('HGET', info, entries[i]) or ''
    reply[#reply + 1] = gone
  end
end
add(redis.call('ZRANGEBYSCORE', workers, now - ttl, '+inf', 'WITHSCORES', 'LIMIT', 0, limit), 0)
local since = now - ttl - kept
add(redis.call('ZRANGEBYSCORE', workers, since, '(' .. (now - ttl), 'WITHSCORES', 'LIMIT', 0, limit), 1)
add(redis.call('ZRANGEBYSCORE', gone_set, since, '+inf', 'WITHSCORES', 'LIMIT', 0, limit), 1)
return reply
