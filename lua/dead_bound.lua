#!lua flags=allow-oom
-- dead_bound.lua: read, set or clear a queue's dead-letter bound (at most
-- `count` dead letters, none older than `age`: lib/dead_bound.lua), or
-- trim its dead letters to it now. Set live: every later death in the
-- queue trims toward it (a bounded amount each, lib/dead_bound.lua).
--
-- allow-oom: a trim and a clear free memory; a set writes one small field
-- and its event (as retention.lua's).
-- include: check clock keys dead_bound events
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  retention, dead
--   writes retention, dead, jobs, detached, progress, logs, events
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] action: show | set | clear | trim
-- set:   ARGV[4] max_count (0..MAX_U32)   ARGV[5] max_age_ms (0..MAX_MS), 0 =
--        no such bound, at least one set   ARGV[6] limit (1..1000): the set
--        trims up to `limit` dead letters past the new bound at once
-- trim:  ARGV[4] limit (1..1000): up to `limit` dead letters past the
--        queue's bound deleted (none without a bound); callers loop while
--        a call deletes `limit`
-- last ARGV, optional: the operator's actor, marked (lib/events.lua: ARGC leaves it out)
-- Events: retention_set (detail "dead letters: " and the bound) when a set
-- changes the bound; retention_cleared (detail the same) when a clear
-- removes one; purged (count, detail naming the bound) by each call that
-- trims (lib/dead_bound.lua trim_dead).
-- Reply: show: { max_count, max_age_ms, dead } (both bounds 0 without a
--   bound; dead: how many dead letters the queue has now);
--   set: { trimmed, dead_left, had, old_count, old_age_ms } (had 0: no bound before);
--   clear: { had, old_count, old_age_ms };
--   trim: { trimmed, dead_left }
queue_name(QUEUE)
local action = ARGV[3]

-- The trim limit argument at `i`.
local function trim_limit(i)
  local limit = uint(ARGV[i], 'trim limit', 1000)
  if limit < 1 then fail('trim limit must be at least 1') end
  return limit
end

local field = dead_bound_field()

if action == 'show' then
  local b = dead_bound_read(redis.call('HGET', K.retention, field)) or { count = 0, age_ms = 0 }
  return { b.count, b.age_ms, redis.call('ZCARD', K.dead) }
end

if action == 'set' then
  local b = {
    count = uint(ARGV[4], 'max count', MAX_U32),
    age_ms = uint(ARGV[5], 'max age', MAX_MS),
  }
  if b.count == 0 and b.age_ms == 0 then
    fail('a dead-letter bound needs a count or an age')
  end
  local limit = trim_limit(6)
  local now = now_ms()
  local raw = redis.call('HGET', K.retention, field)
  local old = dead_bound_read(raw)
  local spec = dead_bound_format(b)
  if spec ~= raw then
    redis.call('HSET', K.retention, field, spec)
    emit(K.events, 'retention_set', QUEUE, now, 'detail', 'dead letters: ' .. dead_bound_words(b))
  end
  local trimmed = trim_dead(b, now, limit)
  local left = redis.call('ZCARD', K.dead)
  if old then return { trimmed, left, 1, old.count, old.age_ms } end
  return { trimmed, left, 0, 0, 0 }
end

if action == 'clear' then
  local old = dead_bound_read(redis.call('HGET', K.retention, field))
  if redis.call('HDEL', K.retention, field) == 0 then return { 0, 0, 0 } end
  emit(K.events, 'retention_cleared', QUEUE, now_ms(),
    'detail', 'dead letters: ' .. (old and dead_bound_words(old) or 'unreadable bound'))
  if not old then return { 1, 0, 0 } end
  return { 1, old.count, old.age_ms }
end

if action == 'trim' then
  local limit = trim_limit(4)
  local b = dead_bound_read(redis.call('HGET', K.retention, field))
  local trimmed = 0
  if b then trimmed = trim_dead(b, now_ms(), limit) end
  return { trimmed, redis.call('ZCARD', K.dead) }
end

fail('action must be show, set, clear or trim; got ' .. tostring(action))
