#!lua
-- schedule_fire.lua: enqueue one tick's job and advance the schedule, at most
-- once per tick however many schedulers call it (seed op UpdateScheduleNextRun).
--
-- The compare-and-advance: the tick fires only while the stored next run
-- still equals the tick the caller read (ARGV[5]) and the record is still the
-- revision it read (ARGV[4]). The first scheduler to get here enqueues and
-- moves next_run on; every other caller, and any resend of this same call
-- after a dropped connection, finds next_run moved and changes nothing. The
-- job id is derived from the schedule name and the tick, so even a tick
-- presented twice creates at most one job while that job lives.
--
-- The job's payload and options come from the stored record (the revision
-- check proves it is the one the caller computed the next tick from), laid out
-- by lib/job_record.lua's new_record and entered with admit(), like enqueue.lua.
--
-- include: check clock keys job_record detached ordering schedule_record events notify time_words
-- KEYS: the queue key list of the schedule's queue (lua/lib/keys.lua),
--   of which this script reads jobs, and writes jobs, detached (a payload
--   to detach), seq, queues, waiting, ord_active, ord_blocked, ord_blocked_n,
--   events
-- then, after its QUEUE_KEY_COUNT keys:
--   KEYS[QUEUE_KEY_COUNT + 1] {ns}:schedules        hash  name -> schedule record (lib/schedule_record.lua); writes
--   KEYS[QUEUE_KEY_COUNT + 2] {ns}:schedules:next   zset  name -> next run (unix ms); writes
-- ARGV[1] queue name        ARGV[2] wake-up channel
-- ARGV[3] schedule name
-- ARGV[4] revision the caller read
-- ARGV[5] tick: the next run the caller read (unix ms)
-- ARGV[6] job id for this tick (derived from name and tick; 1..64 bytes)
-- ARGV[7] following next run (unix ms), > tick; 0 = none, the schedule ended
-- ARGV[8] 1 = enqueue the tick's job, 0 = skip the tick (misfire policy skip)
-- ARGV[9] record format, as enqueue.lua's ARGV[7]: the job is stored
--         detached when its payload is detached:N's N bytes or more
--         (lib/detached.lua); under any other format it is stored whole
--
-- Reply: { code, job id or "", created (1/0), stored next run (0 = none) }
-- code 1 fired: the job was enqueued (created 0: a job with that id already lived)
-- code 2 skipped: next run advanced without a job; the tick is stored as the
--   record's last_skipped and a schedule_skipped event says so (id the
--   schedule, name its jobs' type name, detail the tick and how late it was):
--   a skipped run must be visible to an operator, not only to a debug log
-- code 0 missing: no such schedule
-- code 3 lost: next run is no longer this tick (another scheduler fired it, or an upsert, pause or resume moved it); nothing changed
-- code 4 changed: the record is at another revision, or in another queue; nothing changed
-- code 5 not_due: the tick is still ahead on Redis's clock; nothing changed
-- code 6 already_fired: the tick is not after the last fired tick; next run advanced without a job
-- Errors (nothing written): "ERR redq: ..." naming the bad argument.

local SCHEDULES, NEXT = KEYS[QUEUE_KEY_COUNT + 1], KEYS[QUEUE_KEY_COUNT + 2]

if #ARGV ~= 9 then fail('expected 9 arguments, got ' .. #ARGV) end
queue_name(QUEUE)
local name = text(ARGV[3], 'schedule name', 128)
local rev = uint(ARGV[4], 'revision', MAX_TIME_MS)
local tick = uint(ARGV[5], 'tick', MAX_TIME_MS)
local id = text(ARGV[6], 'job id', 64)
local following = uint(ARGV[7], 'following next run', MAX_TIME_MS)
local enqueue = uint(ARGV[8], 'enqueue flag', 1)
local detach_from = detach_from_format(ARGV[9])
if #id == 0 then fail('job id must not be empty') end
if following ~= 0 and following <= tick then
  fail('following next run ' .. ARGV[7] .. ' must be after the tick ' .. ARGV[5])
end

local function stored_next()
  return tonumber(redis.call('ZSCORE', NEXT, name) or '0')
end

local raw = redis.call('HGET', SCHEDULES, name)
if not raw then return { 0, '', 0, stored_next() } end
local s = decode_schedule(raw, name)
if s[S.rev] ~= rev or s[S.queue] ~= QUEUE then return { 4, '', 0, stored_next() } end
if stored_next() ~= tick then return { 3, '', 0, stored_next() } end
local now = now_ms()
if tick > now then return { 5, '', 0, tick } end

-- Validation is complete: from here on the script writes.
local function advance()
  if following == 0 then
    redis.call('ZREM', NEXT, name)
  else
    redis.call('ZADD', NEXT, following, name)
  end
end

if tick <= s[S.last_tick] then
  advance()
  return { 6, '', 0, following }
end
s[S.last_tick] = tick
if enqueue == 0 then
  s[S.last_skipped] = tick
  advance()
  redis.call('HSET', SCHEDULES, name, encode_schedule(s))
  emit(K.events, 'schedule_skipped', QUEUE, now, 'id', name, 'name', s[S.job_name], 'detail',
    'tick ' .. utc_text(tick) .. ' skipped ' .. lateness_text(now - tick) .. ' late (misfire policy skip)')
  return { 2, '', 0, following }
end

local created = 0
if redis.call('HEXISTS', K.jobs, id) == 0 then
  created = 1
  local m = new_record()
  m[M.queue], m[M.priority] = QUEUE, s[S.priority]
  m[M.seq] = redis.call('INCR', K.seq)
  m[M.enqueued_at], m[M.not_before] = now, now
  m[M.max_attempts], m[M.retry_window] = s[S.max_attempts], s[S.retry_window]
  m[M.name] = s[S.job_name]
  store_new_job(id, m, s[S.payload], detach_from)
  redis.call('SADD', K.queues, QUEUE)
  if admit(id, m, now, now) then wake_workers(QUEUE) end
end
s[S.last_run] = now
s[S.last_job_id] = id
redis.call('HSET', SCHEDULES, name, encode_schedule(s))
advance()
emit(K.events, 'schedule_fired', QUEUE, now, 'id', id, 'name', s[S.job_name], 'count', created,
  'detail', name)
return { 1, id, created, following }
