#!lua flags=allow-oom
-- worker_beat.lua: a worker's heartbeat in the worker registry.
--
-- Not queue-scoped: it receives only the registry keys.
-- allow-oom: a full Redis must not make live workers look dead.
-- include: check clock
-- KEYS[1] {ns}:workers        zset  worker id -> last heartbeat (unix ms, Redis clock); writes
-- KEYS[2] {ns}:workers:info   hash  worker id -> JSON record (host, pid, queues, totals…); writes
-- KEYS[3] {ns}:workers:gone   zset  worker id -> last heartbeat of a lost worker; writes
-- ARGV[1] worker id   ARGV[2] JSON record ("" to leave the registry)
-- ARGV[3] ttl_ms: a worker silent this long is lost: its entry moves to
--         KEYS[3], its record stays, so screens list it as gone
-- ARGV[4] gone_kept_ms: a lost worker is forgotten (entry and record) once
--         silent for ttl_ms + gone_kept_ms
-- Reply: the number of stale entries moved to the gone set.
local workers, info, gone_set = KEYS[1], KEYS[2], KEYS[3]
local id = text(ARGV[1], 'worker id', 64)
local record = ARGV[2]
local ttl = uint(ARGV[3], 'ttl_ms', MAX_MS)
local kept = uint(ARGV[4], 'gone_kept_ms', MAX_MS)
local now = now_ms()
if record == '' then
  redis.call('ZREM', workers, id)
  redis.call('HDEL', info, id)
  redis.call('ZREM', gone_set, id)
else
  if redis.call('ZADD', workers, now, id) == 1 then
    redis.call('ZREM', gone_set, id)
  end
  redis.call('HSET', info, id, record)
end
local stale = redis.call('ZRANGEBYSCORE', workers, '-inf', now - ttl, 'WITHSCORES', 'LIMIT', 0, 100)
for i = 1, #stale, 2 do
  redis.call('ZREM', workers, stale[i])
  redis.call('ZADD', gone_set, stale[i + 1], stale[i])
end
local forgotten = redis.call('ZRANGEBYSCORE', gone_set, '-inf', now - ttl - kept, 'LIMIT', 0, 100)
for _, old in ipairs(forgotten) do
  redis.call('ZREM', gone_set, old)
  redis.call('HDEL', info, old)
end
return #stale / 2
