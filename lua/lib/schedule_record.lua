-- lib/schedule_record.lua: the schedule record, defined once: a msgpack
-- array in {ns}:schedules, fixed-length like the job record so a script can
-- update one field (paused, last run) without touching the payload, which
-- stays byte for byte the JSON text the caller sent.
--
-- S is the schema: S.<field> is the field's position in the array (from 1),
-- one field a line in stored order. driver/build.rs reads this table (each
-- line `name = position,`), checks it as for lib/job_record.lua's M, and
-- generates the Rust positions for driver/src/schedule/record.rs.
-- include: check

local S = {
  name = 1,
  queue = 2,
  cron = 3,             -- the expression as given (parsed in Rust)
  tz = 4,               -- IANA time zone
  payload = 5,          -- JSON text
  priority = 6,         -- 0..255
  max_attempts = 7,     -- 0 = unlimited
  job_name = 8,         -- "" = none
  retry_window = 9,     -- ms, 0 = none
  paused = 10,          -- 0 / 1
  starts_at = 11,       -- unix ms, 0 = none
  ends_at = 12,         -- unix ms, 0 = none
  misfire = 13,         -- 0 fire once, 1 skip
  rev = 14,             -- revision: 1 when created, +1 per upsert
  last_run = 15,        -- unix ms (Redis clock) of the last enqueue, 0 = never
  last_tick = 16,       -- the last tick fired or skipped, unix ms, 0 = none
  last_job_id = 17,     -- "" = none
  created_at = 18,      -- unix ms
  updated_at = 19,      -- unix ms
  last_skipped = 20,    -- the last tick skipped by the misfire policy skip, unix ms, 0 = none
}
local SCHEDULE_LEN = 20

-- A new record: every field at its default ("" for the text fields, 1 for
-- rev, else 0); the caller sets the fields it knows by name (s[S.cron] = ...).
local function new_schedule()
  local s = {}
  for at = 1, SCHEDULE_LEN do s[at] = 0 end
  s[S.name], s[S.queue], s[S.cron], s[S.tz], s[S.payload] = '', '', '', '', ''
  s[S.job_name], s[S.last_job_id] = '', ''
  s[S.rev] = 1
  return s
end

-- The stored record of schedule `name`, refused when it is not a record of
-- this layout (nothing has been written yet when this is called). A record
-- stored before last_skipped existed ends just before it: the field is read
-- as 0 (never), and written back whole with the next write.
local function decode_schedule(raw, name)
  local s = cmsgpack.unpack(raw)
  if type(s) ~= 'table' or #s < S.last_skipped - 1 then
    fail('stored schedule ' .. name .. ' is not a ' .. SCHEDULE_LEN .. '-field record')
  end
  for at = #s + 1, SCHEDULE_LEN do s[at] = 0 end
  return s
end

local function encode_schedule(s)
  return cmsgpack.pack(s)
end
