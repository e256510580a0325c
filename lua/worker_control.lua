#!lua flags=allow-oom
-- worker_control.lua: an operator's word to one running worker, quiet
-- (claim nothing more) or stop (quiet, then exit once idle), published on
-- its holder channel (driver/src/worker/control.rs) and recorded: a worker
-- that claims nothing because someone quieted it must be findable in the
-- events by whoever comes to the incident next, with who did it.
--
-- Not queue-scoped: it receives only the events stream.
-- allow-oom: an operator must be able to quiet a worker while Redis is full.
-- include: check clock events
-- KEYS[1] {ns}:events   stream  the event stream (lib/events.lua); writes
-- ARGV[1] worker id, as `redq workers` lists it   ARGV[2] its holder channel
-- ARGV[3] the word: quiet or stop   ARGV[4] the message body the worker reads
--   for it (driver/src/worker/control.rs QUIET_MESSAGE, STOP_MESSAGE)
-- last ARGV, optional: the operator's actor, marked (lib/events.lua: ARGC leaves it out)
-- Events (queue ""): worker_quieted or worker_stopping (detail the worker
-- id; by), only when a worker heard the word: none listening changed nothing.
-- Reply: how many subscribers heard it (0: no worker listens under that id).
local events = KEYS[1]
local id = text(ARGV[1], 'worker id', 64)
local channel = text(ARGV[2], 'holder channel', 512)
local word = ARGV[3]
if word ~= 'quiet' and word ~= 'stop' then
  fail('the word must be quiet or stop, got ' .. string.format('%q', tostring(word)))
end
local body = text(ARGV[4], 'message body', 64)
local heard = redis.call('PUBLISH', channel, body)
if heard > 0 and word == 'quiet' then
  emit(events, 'worker_quieted', '', now_ms(), 'detail', id)
elseif heard > 0 then
  emit(events, 'worker_stopping', '', now_ms(), 'detail', id)
end
return heard
