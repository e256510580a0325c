#!lua flags=allow-oom
-- worker_beat.lua: a worker's heartbeat in the worker registry.
--
-- Not queue-scoped: it receives only the two registry keys.
-- allow-oom: a full Redis must not make live workers look dead.
-- include: check clock
-- KEYS[1] {ns}:workers        zset  worker id -> last heartbeat (unix ms, Redis clock); writes
-- KEYS[2] {ns}:workers:info   hash  worker id -> JSON record (host, pid, queues, totals…); writes
-- ARGV[1] worker id   ARGV[2] JSON record ("" to leave the registry)
-- ARGV[3] ttl_ms: a worker silent this long is gone; its entry is pruned
-- Reply: the number of stale entries pruned.
local workers, info = KEYS[1], KEYS[2]
local id = text(ARGV[1], 'worker id', 64)
local record = ARGV[2]
local ttl = uint(ARGV[3], 'ttl_ms', MAX_MS)
local now = now_ms()
if record == '' then
  redis.call('ZREM', workers, id)
  redis.call('HDEL', info, id)
else
  redis.call('ZADD', workers, now, id)
  redis.call('HSET', info, id, record)
end
local stale = redis.call('ZRANGEBYSCORE', workers, '-inf', now - ttl, 'LIMIT', 0, 100)
for _, gone in ipairs(stale) do
  redis.call('ZREM', workers, gone)
  redis.call('HDEL', info, gone)
end
return #stale
