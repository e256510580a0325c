#!lua flags=allow-oom
-- pause.lua: pause a queue (claims and hand-offs give out nothing until it
-- is resumed), or resume it and wake its idle workers.
--
-- allow-oom: pausing and resuming are what an operator reaches for during
-- an incident, and Redis being full is one. The only writes are one set
-- member (the queue name, at most 128 bytes) and its `paused` or `resumed`
-- event (lib/events.lua, about 100 bytes), so Redis overshoots maxmemory by
-- that at most. Both in one script, so the event of each change is written
-- with it or not at all: a resume whose event was refused out of memory
-- would leave the events saying the queue is still paused.
-- include: check clock keys events
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  nothing else
--   writes paused, events
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] pause | resume (absent: pause)
-- last ARGV, optional: the operator's actor, marked (lib/events.lua: ARGC leaves it out)
-- Events: paused / resumed (by), only for a change.
-- Reply: code
-- code 1 done: the queue was running and is now paused (or was paused and
--   now runs, and its workers were woken)
-- code 0 unchanged: it was already paused (or not paused); nothing changed
queue_name(QUEUE)
local resume = ARGC >= 3 and ARGV[3] == 'resume'
if ARGC >= 3 and not resume and ARGV[3] ~= 'pause' then
  fail('pause.lua takes pause or resume, got ' .. string.format('%q', tostring(ARGV[3])))
end
if not resume then
  local added = redis.call('SADD', K.paused, QUEUE)
  if added == 1 then emit(K.events, 'paused', QUEUE, now_ms()) end
  return added
end
local removed = redis.call('SREM', K.paused, QUEUE)
if removed == 1 then emit(K.events, 'resumed', QUEUE, now_ms()) end
-- Woken either way: a worker that slept through a resume whose message it
-- missed gets another (PUBLISH never needs memory).
redis.call('PUBLISH', CHANNEL, QUEUE)
return removed
