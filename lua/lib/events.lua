-- lib/events.lua: the event streams, one entry per transition: enqueued and
-- completed in {ns}:events:traffic (K.traffic), every other kind in
-- {ns}:events (K.events), so that a busy queue's traffic never trims an
-- incident's events away (driver/src/event_stream.rs). An entry is a
-- transition, not a job: a batch of 500 enqueued or acknowledged jobs is one
-- entry with its count. Each stream is capped at about EVENTS_MAXLEN
-- entries (XADD MAXLEN ~, which trims whole stream nodes, so the cap costs
-- next to nothing).
--
-- Fields of an entry: kind, queue, at (unix ms, Redis clock), then what the
-- kind has: id (the job, when the transition is about one), name, attempts,
-- error, count (jobs it covers), by (who did an operator action), detail
-- (the kind's own words: a limit's scope, a schedule's name). The driver
-- reads them in driver/src/events/entry.rs.
--
-- Who: an operator call made through a handle with an actor appends one
-- last argument ACTOR_MARK .. actor. Job ids, names and keys are checked
-- free of control characters (lib/check.lua), so that argument is never
-- one of them; a script that counts its arguments counts ARGC, which leaves
-- it out, and a call without it (an older driver, a test calling the script
-- itself) works as before, recording no `by`.
-- composed inline: cancel, gate_cancel and gate_decide set BY to the actor they were given

-- Text, not a number: redis.call hands a Lua number to Redis formatted with
-- printf's %.17g (Redis 7.0), about 2.2k instructions an argument, on every
-- event of every call; a string literal is passed as it is.
local EVENTS_MAXLEN = '10000'
local ACTOR_MARK = '\0by\0'
local MAX_ACTOR_BYTES = 128

-- per call: begin (a function library runs these at every call's entry)
local ARGC, BY = #ARGV, ''
if ARGC > 0 and string.sub(ARGV[ARGC], 1, #ACTOR_MARK) == ACTOR_MARK then
  BY = string.sub(ARGV[ARGC], #ACTOR_MARK + 1, #ACTOR_MARK + MAX_ACTOR_BYTES)
  ARGC = ARGC - 1
end
-- per call: end

-- Append one event of `kind` about `queue` to `stream` (K.events, or the
-- registry scripts' own key); `...` are further field, value pairs. The
-- actor of the call, if any, is recorded as `by`.
local function emit(stream, kind, queue, now, ...)
  if BY ~= '' then
    redis.call('XADD', stream, 'MAXLEN', '~', EVENTS_MAXLEN, '*',
      'kind', kind, 'queue', queue, 'at', now, 'by', BY, ...)
  else
    redis.call('XADD', stream, 'MAXLEN', '~', EVENTS_MAXLEN, '*',
      'kind', kind, 'queue', queue, 'at', now, ...)
  end
end
