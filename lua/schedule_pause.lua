#!lua
-- schedule_pause.lua: pause or resume a schedule.
--
-- Pausing removes the schedule from {ns}:schedules:next, so no scheduler sees
-- it; the ticks that pass while it is paused are not fired later. Resuming
-- places it at the first tick after Redis's clock, computed by the caller
-- from the revision it read (ARGV[3]); when the record has changed since, the
-- caller re-reads and retries.
--
-- KEYS here are not the queue key list: a schedule that is not fired touches
-- no queue.
-- include: check clock schedule_record events
-- KEYS[1] {ns}:schedules        hash  name -> schedule record (lib/schedule_record.lua); writes
-- KEYS[2] {ns}:schedules:next   zset  name -> next run (unix ms); writes
-- KEYS[3] {ns}:events           stream the event stream (lib/events.lua); writes
-- ARGV[1] schedule name
-- ARGV[2] 1 = pause, 0 = resume
-- ARGV[3] resume only: the revision the caller read (0 when pausing)
-- ARGV[4] resume only: the next run (unix ms; 0 = none, the schedule ended)
-- last ARGV, optional: the operator's actor, marked (lib/events.lua: ARGC leaves it out)
-- Events: schedule_paused or schedule_resumed (id the schedule, queue its
-- queue) for a change (code 1) only.
--
-- Reply: code
-- code 1 done: the schedule is now paused (or resumed)
-- code 2 unchanged: it was already paused (or not paused)
-- code 0 missing: no such schedule
-- code 4 changed: the record is at another revision (resume only); nothing changed
-- Errors (nothing written): "ERR redq: ..." naming the bad argument.

local SCHEDULES, NEXT, EVENTS = KEYS[1], KEYS[2], KEYS[3]

if ARGC ~= 4 then fail('expected 4 arguments, got ' .. ARGC) end
local name = text(ARGV[1], 'schedule name', 128)
local pause = uint(ARGV[2], 'pause flag', 1)
local rev = uint(ARGV[3], 'revision', MAX_TIME_MS)
local next_run = uint(ARGV[4], 'next_run_ms', MAX_TIME_MS)

local raw = redis.call('HGET', SCHEDULES, name)
if not raw then return 0 end
local s = decode_schedule(raw, name)
if s[S.paused] == pause then return 2 end
if pause == 0 and s[S.rev] ~= rev then return 4 end

-- Validation is complete: from here on the script writes.
local now = now_ms()
s[S.paused] = pause
s[S.updated_at] = now
redis.call('HSET', SCHEDULES, name, encode_schedule(s))
if pause == 1 or next_run == 0 then
  redis.call('ZREM', NEXT, name)
else
  redis.call('ZADD', NEXT, next_run, name)
end
if pause == 1 then emit(EVENTS, 'schedule_paused', s[S.queue], now, 'id', name)
else emit(EVENTS, 'schedule_resumed', s[S.queue], now, 'id', name) end
return 1
