-- lib/schedule_record.lua: the schedule record, defined once: a msgpack
-- array in {ns}:schedules, fixed-length like the job record so a script can
-- update one field (paused, last run) without touching the payload, which
-- stays byte for byte the JSON text the caller sent.
--
-- SCHEDULE_FIELDS is the schema: the stored order, each field's name and its
-- value when not set. driver/build.rs reads this table (one `{ 'name', ... },`
-- a line) and generates the Rust positions for driver/src/schedule/record.rs.
-- include: check

local SCHEDULE_FIELDS = {
  { 'name', '' },
  { 'queue', '' },
  { 'cron', '' },          -- the expression as given (parsed in Rust)
  { 'tz', '' },            -- IANA time zone
  { 'payload', '' },       -- JSON text
  { 'priority', 0 },       -- 0..255
  { 'max_attempts', 0 },   -- 0 = unlimited
  { 'job_name', '' },      -- "" = none
  { 'retry_window', 0 },   -- ms, 0 = none
  { 'paused', 0 },         -- 0 / 1
  { 'starts_at', 0 },      -- unix ms, 0 = none
  { 'ends_at', 0 },        -- unix ms, 0 = none
  { 'misfire', 0 },        -- 0 fire once, 1 skip
  { 'rev', 1 },            -- revision, +1 per upsert
  { 'last_run', 0 },       -- unix ms (Redis clock) of the last enqueue, 0 = never
  { 'last_tick', 0 },      -- the last tick fired or skipped, unix ms
  { 'last_job_id', '' },   -- "" = none
  { 'created_at', 0 },     -- unix ms
  { 'updated_at', 0 },     -- unix ms
}

-- S.<field> is the field's position in the array (from 1).
local S, SCHEDULE_DEFAULTS = {}, {}
for i, field in ipairs(SCHEDULE_FIELDS) do
  S[field[1]] = i
  SCHEDULE_DEFAULTS[i] = field[2]
end
local SCHEDULE_LEN = #SCHEDULE_FIELDS

-- A new record: the named fields set, every other at its default. A name
-- that is not a field is a bug in the calling script, not bad input.
local function new_schedule(values)
  local s = {}
  for i = 1, SCHEDULE_LEN do s[i] = SCHEDULE_DEFAULTS[i] end
  for name, v in pairs(values) do
    local at = S[name]
    if not at then error('redq: the schedule record has no field ' .. tostring(name)) end
    s[at] = v
  end
  return s
end

-- The stored record of schedule `name`, refused when it is not a record of
-- this layout (nothing has been written yet when this is called).
local function decode_schedule(raw, name)
  local s = cmsgpack.unpack(raw)
  if type(s) ~= 'table' or #s < SCHEDULE_LEN then
    fail('stored schedule ' .. name .. ' is not a ' .. SCHEDULE_LEN .. '-field record')
  end
  return s
end

local function encode_schedule(s)
  return cmsgpack.pack(s)
end
