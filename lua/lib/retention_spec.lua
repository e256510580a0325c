-- lib/retention_spec.lua: a queue's retention policy, what it keeps of its
-- finished jobs, apart from the rest of retention (lib/kept.lua) so that a
-- call on a queue that keeps nothing composes only this (one HGET a call)
-- and never builds kept.lua's functions (driver/src/scripts/compose.rs:
-- modules are run at their first use); the policy's stored form is
-- lib/kept_record.lua's (retention_read, retention_format), built only when
-- a policy is found.
-- include: keys kept_record
--
-- The policy of queue Q is the field Q of {ns}:retention (K.retention).

-- This queue's policy, or nil when it keeps nothing: one HGET.
local function retention_policy()
  local raw = redis.call('HGET', K.retention, QUEUE)
  if not raw then return nil end
  return retention_read(raw)
end
