#!lua flags=allow-oom
-- pause.lua: mark a queue paused: claims and hand-offs give out nothing
-- until it is resumed (SREM of the same member, which never needs memory).
--
-- allow-oom: pausing is what an operator reaches for during an incident,
-- and Redis being full is one. The only write is one set member (the queue
-- name, at most 128 bytes) and its `paused` event (lib/events.lua, about
-- 100 bytes), so Redis overshoots maxmemory by that at most.
-- include: check clock keys events
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  nothing else
--   writes paused, events
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- Reply: code
-- code 1 paused: the queue was running and is now paused
-- code 0 already_paused: the queue was already paused; nothing changed
queue_name(QUEUE)
local added = redis.call('SADD', K.paused, QUEUE)
-- An event only for a change (one stream entry: allowed out of memory too).
if added == 1 then emit(K.events, 'paused', QUEUE, now_ms()) end
return added
