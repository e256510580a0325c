#!lua
-- schedule_upsert.lua: create or replace a recurring schedule (seed op UpsertSchedule).
--
-- The cron math is done in Rust (driver/src/schedule/cron.rs): the caller
-- parses the expression and time zone, and sends the first tick after Redis's
-- clock (at or after the start time) as ARGV[15]. This script only validates,
-- stores and places the schedule.
--
-- include: check clock keys schedule_record events
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   writes events (its own keys share their slot)
-- then, after its QUEUE_KEY_COUNT keys:
--   KEYS[QUEUE_KEY_COUNT + 1] {ns}:schedules        hash  name -> schedule record (lib/schedule_record.lua); writes
--   KEYS[QUEUE_KEY_COUNT + 2] {ns}:schedules:next   zset  name -> next run (unix ms), absent while
--                                            paused or once the schedule has ended; writes
-- ARGV[1]  queue name        ARGV[2] wake-up channel (unused)
-- ARGV[3]  schedule name     1..128 bytes, no control characters
-- ARGV[4]  cron expression   1..256 bytes, no control characters (parsed in Rust)
-- ARGV[5]  time zone         IANA name, 1..64 bytes
-- ARGV[6]  payload           JSON text, 1..ARGV[16] bytes
-- ARGV[7]  priority          0..255
-- ARGV[8]  max_attempts      0 = unlimited
-- ARGV[9]  job name          "" for none
-- ARGV[10] retry_window_ms   0 = none
-- ARGV[11] paused            0 = running, 1 = paused, 2 = keep the stored state
--                            (a new schedule then runs)
-- ARGV[12] starts_at_ms      0 = none
-- ARGV[13] ends_at_ms        0 = none
-- ARGV[14] misfire policy    0 = fire once, 1 = skip
-- ARGV[15] next_run_ms       the first tick computed by the caller; 0 = none
--                            (the schedule has already ended)
-- ARGV[16] payload limit     bytes
-- last ARGV, optional: the operator's actor, marked (lib/events.lua: ARGC leaves it out)
--
-- When the expression, time zone, start and end are unchanged and the
-- schedule was running and stays running, its stored next run is kept: an
-- application that upserts its schedules at every start must not lose (or
-- move) a tick that is due but not fired yet. Otherwise ARGV[15] is used.
-- The last run, last tick and last job id carry over; the revision goes up by
-- one, so a scheduler that read the old record cannot fire with it.
--
-- Events (lib/events.lua): schedule_created (id the schedule, detail its
-- expression and time zone), or schedule_changed (detail the fields that
-- differ from the stored definition, by name, with the old value of the
-- queue, expression and time zone, "expression (was 0 2 * * *)", cut to WAS_MAX
-- bytes: never the payload's bytes);
-- an upsert of the definition already stored writes none (an application
-- that upserts its schedules at every start adds nothing to the feed).
--
-- Reply: { code, revision, next_run_ms (0 = none), paused (0/1) }
-- code 1 created: no schedule had this name
-- code 2 updated: the schedule existed and now has the given definition
-- Errors (nothing written): "ERR redq: ..." naming the bad argument.

local SCHEDULES, NEXT = KEYS[QUEUE_KEY_COUNT + 1], KEYS[QUEUE_KEY_COUNT + 2]
-- Longest old value a schedule_changed detail quotes, in bytes (a cron
-- expression may be 256).
local WAS_MAX = 64

if ARGC ~= 16 then fail('expected 16 arguments, got ' .. ARGC) end
queue_name(QUEUE)
local limit = uint(ARGV[16], 'payload limit', 1073741824)
local name = text(ARGV[3], 'schedule name', 128)
local cron = text(ARGV[4], 'cron expression', 256)
local tz = text(ARGV[5], 'time zone', 64)
local payload = ARGV[6]
local priority = uint(ARGV[7], 'priority', 255)
local max_attempts = uint(ARGV[8], 'max_attempts', MAX_U32)
local job_name = text(ARGV[9], 'job name', 256)
local retry_window = uint(ARGV[10], 'retry_window_ms', MAX_MS)
local paused_arg = uint(ARGV[11], 'paused', 2)
local starts_at = uint(ARGV[12], 'starts_at_ms', MAX_TIME_MS)
local ends_at = uint(ARGV[13], 'ends_at_ms', MAX_TIME_MS)
local misfire = uint(ARGV[14], 'misfire policy', 1)
local next_run = uint(ARGV[15], 'next_run_ms', MAX_TIME_MS)
if #name == 0 then fail('schedule name must not be empty') end
if #cron == 0 then fail('cron expression must not be empty') end
if #tz == 0 then fail('time zone must not be empty') end
if #payload == 0 or #payload > limit then
  fail('payload is ' .. #payload .. ' bytes; accepted: 1 to ' .. limit)
end
if ends_at > 0 and ends_at < starts_at then fail('ends_at_ms must not be before starts_at_ms') end

local raw = redis.call('HGET', SCHEDULES, name)
local old = raw and decode_schedule(raw, name)

-- Validation is complete: from here on the script writes.
local now = now_ms()
local stored_next = redis.call('ZSCORE', NEXT, name)
local paused
if paused_arg == 2 then
  paused = old and old[S.paused] or 0
else
  paused = paused_arg
end

local s = new_schedule()
s[S.name], s[S.queue], s[S.cron], s[S.tz] = name, QUEUE, cron, tz
s[S.payload], s[S.priority], s[S.max_attempts] = payload, priority, max_attempts
s[S.job_name], s[S.retry_window], s[S.paused] = job_name, retry_window, paused
s[S.starts_at], s[S.ends_at], s[S.misfire] = starts_at, ends_at, misfire
s[S.created_at], s[S.updated_at] = now, now
local code = 1
if old then
  code = 2
  s[S.rev] = old[S.rev] + 1
  s[S.last_run] = old[S.last_run]
  s[S.last_tick] = old[S.last_tick]
  s[S.last_skipped] = old[S.last_skipped]
  s[S.last_job_id] = old[S.last_job_id]
  s[S.created_at] = old[S.created_at]
end

local same_timing = old and old[S.cron] == cron and old[S.tz] == tz
  and old[S.starts_at] == starts_at and old[S.ends_at] == ends_at
  and old[S.paused] == 0 and paused == 0 and stored_next
if same_timing then
  next_run = tonumber(stored_next)
end

redis.call('HSET', SCHEDULES, name, encode_schedule(s))
if paused == 1 or next_run == 0 then
  redis.call('ZREM', NEXT, name)
else
  redis.call('ZADD', NEXT, next_run, name)
end
if code == 1 then
  emit(K.events, 'schedule_created', QUEUE, now, 'id', name, 'detail',
    cron .. ' ' .. tz .. (paused == 1 and ', paused' or ''))
else
  local changed = {}
  local function differs(field, word)
    if old[field] ~= s[field] then changed[#changed + 1] = word end
  end
  -- The old value, for the fields a reader needs it to follow the change.
  -- Stored values were checked as they were upserted (no control
  -- characters; a queue name at most 128 bytes, a time zone 64); an
  -- expression (ASCII: croner refuses anything else) is cut to WAS_MAX
  -- bytes so the detail stays one short line.
  local function was(field, word)
    if old[field] == s[field] then return end
    local value = old[field]
    if field == S.cron and #value > WAS_MAX then value = string.sub(value, 1, WAS_MAX) .. '...' end
    changed[#changed + 1] = word .. ' (was ' .. value .. ')'
  end
  was(S.queue, 'queue')
  was(S.cron, 'expression')
  was(S.tz, 'time zone')
  differs(S.payload, 'payload')
  differs(S.priority, 'priority')
  differs(S.max_attempts, 'max attempts')
  differs(S.job_name, 'job name')
  differs(S.retry_window, 'retry window')
  differs(S.starts_at, 'start')
  differs(S.ends_at, 'end')
  differs(S.misfire, 'misfire policy')
  differs(S.paused, paused == 1 and 'paused' or 'running')
  if #changed > 0 then
    emit(K.events, 'schedule_changed', QUEUE, now, 'id', name, 'detail', table.concat(changed, ', '))
  end
end
if paused == 1 then next_run = 0 end
return { code, s[S.rev], next_run, paused }
