-- lib/retention_spec.lua: a queue's retention policy, what it keeps of its
-- finished jobs, apart from the rest of retention (lib/kept.lua) so that a
-- call on a queue that keeps nothing composes only this (one HGET a call)
-- and never builds kept.lua's functions (driver/src/scripts/compose.rs:
-- modules are run at their first use).
-- include: keys
--
-- The policy of queue Q is the field Q of {ns}:retention (K.retention):
-- "max_count max_age_ms max_bytes tombstone_ms", 0 = no such bound (at least
-- one of the first three is set; the driver refuses a policy without one).

-- This queue's policy, or nil when it keeps nothing: one HGET.
local function retention_policy()
  local raw = redis.call('HGET', K.retention, QUEUE)
  if not raw then return nil end
  local count, age, bytes, tomb = string.match(raw, '^(%d+) (%d+) (%d+) (%d+)$')
  if not count then return nil end
  return {
    count = tonumber(count), age_ms = tonumber(age), bytes = tonumber(bytes),
    tombstone_ms = tonumber(tomb),
  }
end

-- The stored form of a policy (retention.lua writes it).
local function retention_format(p)
  return string.format('%d %d %d %d', p.count, p.age_ms, p.bytes, p.tombstone_ms)
end
