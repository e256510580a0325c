-- lib/job_record.lua: the job record, defined once. A job's value in
-- {ns}:jobs is this msgpack array immediately followed by its payload (JSON
-- text, opaque to Lua): one hash entry a job instead of two saves about 70
-- bytes of Redis memory per job.
--
-- JOB_FIELDS is the schema: the stored order, each field's name and its
-- value when not set. driver/build.rs reads this table (one `{ 'name', ... },`
-- a line) and generates the Rust positions, so the driver's decoder
-- (driver/src/meta.rs) cannot drift from it. Every field is always present
-- ("" and 0 for "none"), so cmsgpack packs a fixed-length array.
--
-- The lease comes first and what an ack needs next: leasing rewrites only the
-- first four fields' bytes (lib/lease.lua) and an ack decodes only the first
-- eight (record_head), instead of the whole record each time. Appending a
-- field changes the array header below, which every reader checks; moving
-- one breaks stored records.

local JOB_FIELDS = {
  { 'lease_id', 0 },        -- the current lease (the fencing token), 0 = not leased
  { 'lease_expiry', 0 },    -- unix ms (Redis clock), 0 = not leased
  { 'worker_node', '' },    -- the holder's node id (a decimal u64 kept as text)
  { 'worker_instance', 0 }, -- the holder's instance (u32)
  { 'queue', '' },
  { 'dedup_key', '' },      -- "" = none
  { 'dedup_ttl', 0 },       -- ms; 0 = the key is held while the job lives
  { 'ordering_key', '' },   -- "" = none
  { 'priority', 0 },        -- 0..255, higher is claimed first
  { 'seq', 0 },             -- enqueue order (FIFO within a priority)
  { 'enqueued_at', 0 },     -- unix ms
  { 'not_before', 0 },      -- unix ms: due no earlier
  { 'attempts', 0 },        -- failed attempts so far
  { 'max_attempts', 0 },    -- 0 = unlimited
  { 'retry_window', 0 },    -- ms after enqueued_at a failure dead-letters; 0 = none
  { 'name', '' },           -- job type name, "" = none
  { 'error', '' },          -- the last failure's text
  { 'died_at', 0 },         -- unix ms it was dead-lettered, 0 = alive
  { 'resolved_lease', 0 },  -- see below
}
-- resolved_lease: the lease whose outcome was last recorded, so a resent
-- call is recognised: the lease id after a nack, minus the lease id after a
-- release, 0 after a reclaim or requeue.

-- M.<field> is the field's position in the array (from 1).
local M, JOB_DEFAULTS = {}, {}
for i, field in ipairs(JOB_FIELDS) do
  M[field[1]] = i
  JOB_DEFAULTS[i] = field[2]
end
local JOB_LEN = #JOB_FIELDS

-- A new record: the named fields set, every other at its default. A name
-- that is not a field is a bug in the calling script, not bad input.
local function new_record(values)
  local m = {}
  for i = 1, JOB_LEN do m[i] = JOB_DEFAULTS[i] end
  for name, v in pairs(values) do
    local at = M[name]
    if not at then error('redq: the job record has no field ' .. tostring(name)) end
    m[at] = v
  end
  return m
end

-- The stored bytes of a record.
local function encode_record(m, payload)
  return cmsgpack.pack(m) .. payload
end

-- Split a stored record into the meta (a table) and the payload (a string).
local function split_record(raw)
  local used, m = cmsgpack.unpack_one(raw)
  if used < 0 then return m, '' end
  return m, string.sub(raw, used + 1)
end

-- The bytes every record starts with: a msgpack array16 header of JOB_LEN
-- fields, then, while the job is not leased, its cleared lease 0, 0, '', 0.
local RECORD_HEADER = '\220\0' .. string.char(JOB_LEN)
local CLEARED_LEASE = '\0\0\160\0'

-- The lease, queue and key fields of a record (M positions 1 to 8), decoded
-- without the rest: what an ack needs.
local function record_head(raw)
  if string.sub(raw, 1, 3) ~= RECORD_HEADER then return (split_record(raw)) end
  local _, a, b, c, d, e, f, g, h = cmsgpack.unpack_limit(raw, 8, 3)
  return { a, b, c, d, e, f, g, h }
end
