-- lib/dead_bound.lua: a queue's dead-letter bound, opt-in: at most `count`
-- dead letters, none older than `age_ms`, enforced when a job of the queue
-- goes dead (nack.lua; a reclaim's dead letters, lib/retry.lua
-- reclaim_lapsed, in claim.lua and reclaim.lua; a waiter's,
-- lib/gate_decide.lua) and by dead_bound.lua (set, trim).
-- include: keys notes events time_words
--
-- The bound of queue Q is the field "dead\n" .. Q of {ns}:retention
-- (K.retention): "count age_ms", 0 for a bound not set. No other field can
-- be named so: a queue's retention policy is the field Q and its charge
-- "Q:bytes", and a queue name holds no control character (lib/check.lua
-- queue_name), so neither begins "dead\n".
--
-- Cost when off: a retry, an ack, a claim read nothing of it; a death reads
-- one HGET (bound_dead). With a bound, a death deletes at most
-- DEAD_TRIM_BATCH of the oldest dead letters past it (normally the one
-- the death pushed over the count), so a script stays short; the set and
-- the trim of dead_bound.lua loop to catch up.
--
-- A trimmed dead letter goes as delete_dead.lua deletes one: its dead-set
-- member, its record, its notes (lib/notes.lua forget_notes) and its
-- detached payload; one `purged` event per trim names its count and the
-- bound (detail), so nothing vanishes silently.

local DEAD_TRIM_BATCH = 100

-- The field of {ns}:retention holding this queue's dead-letter bound.
local function dead_bound_field()
  return 'dead\n' .. QUEUE
end

-- A stored bound read back: { count, age_ms }, nil when absent or unreadable.
local function dead_bound_read(raw)
  if not raw then return nil end
  local count, age = string.match(raw, '^(%d+) (%d+)$')
  if not count then return nil end
  return { count = tonumber(count), age_ms = tonumber(age) }
end

-- The stored form of a bound.
local function dead_bound_format(b)
  return string.format('%d %d', b.count, b.age_ms)
end

-- A bound as an operator reads it in an event: each bound it has.
local function dead_bound_words(b)
  local words = {}
  if b.count > 0 then words[#words + 1] = string.format('count %d', b.count) end
  if b.age_ms > 0 then words[#words + 1] = 'age ' .. duration_words(b.age_ms) end
  return table.concat(words, ', ')
end

-- Delete the ids of `ids` (oldest dead letters, all in K.dead) as
-- delete_dead.lua does, appending them to `gone`.
local function dead_bound_delete(ids, gone)
  if #ids == 0 then return end
  redis.call('ZREM', K.dead, unpack(ids))
  redis.call('HDEL', K.jobs, unpack(ids))
  for _, id in ipairs(ids) do gone[#gone + 1] = id end
end

-- Delete up to `limit` dead letters of this queue past bound `b` at `now`:
-- first those that died more than age_ms ago, then the oldest beyond the
-- count. Emits one `purged` event when any went. Returns how many.
local function trim_dead(b, now, limit)
  local gone = {}
  if b.age_ms > 0 then
    local old = redis.call('ZRANGEBYSCORE', K.dead, '-inf', string.format('(%d', now - b.age_ms), 'LIMIT', 0, limit)
    dead_bound_delete(old, gone)
  end
  if b.count > 0 and #gone < limit then
    local over = redis.call('ZCARD', K.dead) - b.count
    if over > 0 then
      dead_bound_delete(redis.call('ZRANGE', K.dead, 0, math.min(over, limit - #gone) - 1), gone)
    end
  end
  if #gone == 0 then return 0 end
  forget_notes(gone)
  redis.call('HDEL', K.detached, unpack(gone))
  emit(K.events, 'purged', QUEUE, now, 'count', #gone,
    'detail', 'dead, past the queue\'s dead-letter bound (' .. dead_bound_words(b) .. ')')
  return #gone
end

-- After a death in this queue: trim toward its bound, if it has one (one
-- HGET when it has none). Returns how many dead letters were deleted.
local function bound_dead(now)
  local b = dead_bound_read(redis.call('HGET', K.retention, dead_bound_field()))
  if not b then return 0 end
  return trim_dead(b, now, DEAD_TRIM_BATCH)
end
