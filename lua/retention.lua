#!lua flags=allow-oom
-- retention.lua: read, set or clear what a queue keeps of its finished
-- jobs (its retention policy, lib/kept.lua). Set live: the next ack or
-- cancel of the queue follows the new policy (and trims toward it, a
-- bounded amount per call).
--
-- allow-oom: clearing frees memory; a set writes one small field and its
-- event (one stream entry of about 100 bytes, as pause.lua's).
-- include: check clock keys kept_record retention_spec kept events time_words
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  retention, completed, cancelled, kept
--   writes retention, kept, completed, cancelled, tombstones, tombstones_at, events
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] action: show | set | clear
-- set:   ARGV[4] max_count   ARGV[5] max_age_ms   ARGV[6] max_bytes
--        ARGV[7] tombstone_ms (1..MAX_MS); 0 = no such bound, and at least
--        one of the first three is set
-- clear: ARGV[4] limit (1..1000). Removes the policy (nothing more is
--        kept) and forgets up to `limit` kept jobs, leaving their
--        tombstones; callers loop until none is left.
--        The tombstones expire after the policy's tombstone age (a day
--        when none was set).
-- last ARGV, optional: the operator's actor, marked (lib/events.lua: ARGC leaves it out)
-- Events: retention_set (detail the policy's figures) when a set changes the
-- policy; retention_cleared (detail the figures it had) by the clear call
-- that removes a policy (not by the calls that go on forgetting after it).
-- Reply: show: {} when the queue keeps nothing and keeps nothing still,
--   else { max_count, max_age_ms, max_bytes, tombstone_ms, kept_bytes,
--   completed, cancelled, expired } (bounds 0 when no policy is set):
--   completed and cancelled count the jobs within the age bound on Redis's
--   clock now (lib/kept_record.lua kept_expired), expired those past it
--   that the queue's next ack or cancel frees (kept_bytes still counts
--   them: they hold their memory until then);
--   set: { 1 }; clear: { forgotten, kept left }
queue_name(QUEUE)
local action = ARGV[3]

-- A policy as an operator reads it on the Events screen: each bound it has.
local function retention_words(p)
  local words = {}
  if p.count > 0 then words[#words + 1] = string.format('count %d', p.count) end
  if p.age_ms > 0 then words[#words + 1] = 'age ' .. duration_words(p.age_ms) end
  if p.bytes > 0 then words[#words + 1] = string.format('size %d bytes', p.bytes) end
  words[#words + 1] = 'tombstones ' .. duration_words(p.tombstone_ms)
  return table.concat(words, ', ')
end
local function kept_left()
  return redis.call('ZCARD', K.completed) + redis.call('ZCARD', K.cancelled)
end

if action == 'show' then
  local p = retention_policy()
  local left = kept_left()
  if not p and left == 0 then return {} end
  local since = kept_range_min(p, now_ms())
  local completed = redis.call('ZCOUNT', K.completed, since, '+inf')
  local cancelled = redis.call('ZCOUNT', K.cancelled, since, '+inf')
  p = p or { count = 0, age_ms = 0, bytes = 0, tombstone_ms = 0 }
  return {
    p.count, p.age_ms, p.bytes, p.tombstone_ms,
    tonumber(redis.call('HGET', K.retention, bytes_field()) or '0'),
    completed, cancelled, left - completed - cancelled,
  }
end

if action == 'set' then
  local p = {
    count = uint(ARGV[4], 'max count', MAX_U32),
    age_ms = uint(ARGV[5], 'max age', MAX_MS),
    bytes = uint(ARGV[6], 'max bytes', MAX_TIME_MS),
    tombstone_ms = uint(ARGV[7], 'tombstone age', MAX_MS),
  }
  if p.count == 0 and p.age_ms == 0 and p.bytes == 0 then
    fail('a retention policy needs a count, an age or a size bound')
  end
  if p.tombstone_ms < 1 then fail('tombstone age must be at least 1 ms') end
  local old = redis.call('HGET', K.retention, QUEUE)
  local spec = retention_format(p)
  if spec ~= old then
    redis.call('HSET', K.retention, QUEUE, spec)
    emit(K.events, 'retention_set', QUEUE, now_ms(), 'detail', retention_words(p))
  end
  return { 1 }
end

if action == 'clear' then
  local limit = uint(ARGV[4], 'clear limit', 1000)
  if limit < 1 then fail('clear limit must be at least 1') end
  local p = retention_policy()
  local tombstone_ms = p and p.tombstone_ms or DEFAULT_TOMBSTONE_MS
  local now = now_ms()
  if redis.call('HDEL', K.retention, QUEUE) == 1 then
    emit(K.events, 'retention_cleared', QUEUE, now, 'detail', p and retention_words(p) or 'unreadable policy')
  end
  local forgotten = 0
  for _, set in ipairs({ { K.completed, 'completed' }, { K.cancelled, 'cancelled' } }) do
    if forgotten < limit then
      local head = redis.call('ZRANGE', set[1], 0, limit - forgotten - 1, 'WITHSCORES')
      local _, n = forget(set[1], set[2], head, now, tombstone_ms)
      forgotten = forgotten + (n or 0)
    end
  end
  local left = kept_left()
  if left == 0 then redis.call('HDEL', K.retention, bytes_field()) end
  return { forgotten, left }
end

fail('action must be show, set or clear; got ' .. tostring(action))
