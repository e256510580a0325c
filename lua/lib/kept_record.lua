-- lib/kept_record.lua: the kept record of a finished job, its tombstone and
-- the retention policy that bounds them, each defined once, with when a kept
-- job or a tombstone has outlived its bound. No keys: kept_get.lua, which
-- takes no queue's key list, reads them too. A kept job's value in {ns}:kept (K.kept) is this msgpack
-- array; driver/src/kept/record.rs decodes it, and a unit test there reads
-- this table and fails when the Rust positions differ from it.
--
-- KR is the schema: KR.<field> is the field's position in the array (from
-- 1), one field a line in stored order. Every field is always present (''
-- and 0 for "none"). Fields are only ever appended.

local KR = {
  outcome = 1,          -- 'completed' | 'cancelled'
  queue = 2,            -- text
  name = 3,             -- text: job type name, '' = none
  attempt = 4,          -- the attempt that finished it (1 = first run); for a
                        -- cancel, the failed attempts before it
  holder_node = 5,      -- text: the node id that held it last, '' = none
  holder_instance = 6,  -- the holder's instance
  enqueued_at = 7,      -- unix ms
  finished_at = 8,      -- unix ms it completed or was cancelled (Redis clock)
  run_ms = 9,           -- how long the last run took, as its worker measured; 0 = unknown
  cancelled_by = 10,    -- text: who cancelled it, as the operator gave it ('' unless cancelled)
  cancelled_in = 11,    -- the state it was cancelled in ('' unless cancelled)
  result = 12,          -- JSON text the handler returned, '' = none
}
local KEPT_LEN = 12

-- A kept record with every field at its default.
local function new_kept(outcome, queue, finished_at)
  return { outcome, queue, '', 0, '', 0, 0, finished_at, 0, '', '', '' }
end

local function encode_kept(k)
  return cmsgpack.pack(k)
end

-- A stored kept record, decoded (only read on rare paths: a lookup, a late
-- call of a cancelled job's holder).
local function decode_kept(raw)
  return cmsgpack.unpack(raw)
end

-- A tombstone in {ns}:tombstones: what is left of a finished job once its
-- kept record is gone, "<c|x> <finished at ms>" (c = completed, x =
-- cancelled): about 15 bytes of value.
local TOMBSTONE_OF = { completed = 'c', cancelled = 'x' }

local function tombstone_value(outcome, at)
  return TOMBSTONE_OF[outcome] .. ' ' .. string.format('%d', at)
end

-- 'completed' or 'cancelled' and the time, of a tombstone's bytes.
local function tombstone_read(raw)
  local kind, at = string.match(raw, '^(%a) (%d+)$')
  if kind == 'c' then return 'completed', tonumber(at) end
  if kind == 'x' then return 'cancelled', tonumber(at) end
  return nil, 0
end

-- A queue's retention policy, as stored in its field of {ns}:retention
-- (K.retention, lib/retention_spec.lua reads it): "max_count max_age_ms
-- max_bytes tombstone_ms", 0 = no such bound (at least one of the first
-- three is set; the driver refuses a policy without one).
local function retention_read(raw)
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

-- The finish time a kept job must be later than to be kept at `now` under
-- `policy` (nil: any): past its queue's age bound, every read treats a kept
-- job as trimmed (what lib/kept.lua's trim_kept makes of it at the queue's
-- next ack or cancel: a tombstone), though it holds its memory until that
-- trim. A queue without a policy (a clear under way) or without an age
-- bound keeps it.
local function kept_after(policy, now)
  if policy and policy.age_ms > 0 then return now - policy.age_ms end
  return nil
end

-- Whether a kept job that finished at `at` is past its age bound at `now`.
local function kept_expired(at, policy, now)
  local after = kept_after(policy, now)
  return after ~= nil and at <= after
end

-- kept_after as a zset score range's lower end: '(<ms>' or '-inf'.
local function kept_range_min(policy, now)
  local after = kept_after(policy, now)
  if after then return string.format('(%d', after) end
  return '-inf'
end

-- When the tombstone of a job kept until its age bound passed expires: its
-- own age after that moment, whenever the trim comes.
local function aged_tombstone_expiry(at, policy)
  return at + policy.age_ms + policy.tombstone_ms
end
