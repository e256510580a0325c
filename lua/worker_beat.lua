#!lua flags=allow-oom
-- worker_beat.lua: a worker's heartbeat in the worker registry.
--
-- Not queue-scoped: it receives only the registry keys and the events stream.
-- allow-oom: a full Redis must not make live workers look dead.
-- Events (lib/events.lua, queue ""): worker_joined when an id enters the
-- registry, worker_left when it leaves it (its last beat), worker_lost when
-- this beat prunes an entry silent for ttl_ms (so a lost worker is written
-- by the next beat of any worker of the namespace after its ttl, at most a
-- beat interval late; with no worker left beating, nobody notices). A beat
-- that comes ttl_ms or more after this worker's own previous one prunes
-- nobody: whatever kept it from Redis that long (CLIENT PAUSE, a stalled
-- or restarted server, this process frozen) may have kept every peer away
-- as well, so their silence says nothing yet. Its next beat prunes, by
-- when each live peer has beaten again. A worker_lost event is written when
-- the loss is noticed, so its detail says when the worker was last seen:
-- `ID, last seen 2026-12-07 22:20:21 UTC, 54 s before this was noticed`
-- (the time an operator's timeline needs; the event's own is the notice).
-- include: check clock events time_words
-- KEYS[1] {ns}:workers        zset  worker id -> last heartbeat (unix ms, Redis clock); writes
-- KEYS[2] {ns}:workers:info   hash  worker id -> JSON record (host, pid, queues, totals…); writes
-- KEYS[3] {ns}:events         stream the event stream (lib/events.lua); writes
-- KEYS[4] {ns}:workers:gone   zset  worker id -> last heartbeat of a lost worker; writes
-- ARGV[1] worker id   ARGV[2] JSON record ("" to leave the registry)
-- ARGV[3] ttl_ms: a worker silent this long is lost: its entry moves to
--         the gone set, its record stays, so screens list it as gone
-- ARGV[4] gone_kept_ms: a lost worker is forgotten (entry and record) once
--         silent for ttl_ms + gone_kept_ms
-- Reply: the number of stale entries moved to the gone set.
local workers, info, events, gone_set = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id = text(ARGV[1], 'worker id', 64)
local record = ARGV[2]
local ttl = uint(ARGV[3], 'ttl_ms', MAX_MS)
local kept = uint(ARGV[4], 'gone_kept_ms', MAX_MS)
local now = now_ms()
local previous = redis.call('ZSCORE', workers, id)
local silenced_too = previous and now - tonumber(previous) >= ttl
if record == '' then
  if redis.call('ZREM', workers, id) == 1 then emit(events, 'worker_left', '', now, 'detail', id) end
  redis.call('HDEL', info, id)
  redis.call('ZREM', gone_set, id)
else
  if redis.call('ZADD', workers, now, id) == 1 then
    emit(events, 'worker_joined', '', now, 'detail', id)
    redis.call('ZREM', gone_set, id)
  end
  redis.call('HSET', info, id, record)
end
local stale = {}
if not silenced_too then
  stale = redis.call('ZRANGEBYSCORE', workers, '-inf', now - ttl, 'WITHSCORES', 'LIMIT', 0, 100)
end
for i = 1, #stale, 2 do
  local gone = stale[i]
  redis.call('ZREM', workers, gone)
  redis.call('ZADD', gone_set, stale[i + 1], gone)
  local seen = tonumber(stale[i + 1])
  emit(events, 'worker_lost', '', now, 'detail', gone .. ', last seen ' .. utc_text(seen) .. ', '
    .. lateness_text(now - seen) .. ' before this was noticed')
end
local forgotten = redis.call('ZRANGEBYSCORE', gone_set, '-inf', now - ttl - kept, 'LIMIT', 0, 100)
for _, old in ipairs(forgotten) do
  redis.call('ZREM', gone_set, old)
  redis.call('HDEL', info, old)
end
return #stale / 2
