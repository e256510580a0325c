#!lua flags=allow-oom
-- record_format.lua: the namespace's record format marker
-- (driver/src/record_format.rs, RecordFormat), set with the event that
-- says who set it; and the event that says what a rewrite back to the
-- standard layout did. The rewrite itself runs in rewrite_records.lua, one
-- bounded step a call, so only the driver knows its totals, once its last
-- step has returned.
--
-- allow-oom: taking a namespace back to the standard format is what an
-- operator does during a rollback, which a full Redis may be part of. The
-- writes are one short string and one event (about 100 bytes, as
-- pause.lua's).
-- include: check clock keys events
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  record_format
--   writes record_format, events
-- ARGV[1] queue name (any valid one: the marker is the namespace's)
-- ARGV[2] wake-up channel
-- ARGV[3] step: set | rewritten
--   set:       ARGV[4] the format's marker, "standard" for none
--   rewritten: ARGV[4] compact  ARGV[5] detached  ARGV[6] left_leased (counts)
-- last ARGV, optional: the operator's actor, marked (lib/events.lua: ARGC leaves it out)
-- Events (no queue): record_format_set (detail "<new> (was <old>)"), only
--   when the marker changed; records_rewritten (count the records
--   rewritten, detail the counts by kind).
-- Reply: code
-- code 1 changed: the marker changed, or the rewrite's event was written
-- code 0 unchanged: the marker was already so; nothing written
queue_name(QUEUE)
local step = ARGV[3]
local STANDARD = 'standard'

if step == 'set' then
  local want = ARGV[4]
  -- The driver sends RecordFormat::name(); anything else is refused before
  -- it could reach a reader that refuses to connect on an unknown marker.
  if type(want) ~= 'string' or not string.match(want, '^[%a+]+[:%d]*$') then
    fail('a record format is a name such as compact or detached:4096, got '
      .. string.format('%q', tostring(want)))
  end
  local was = redis.call('GET', K.record_format) or STANDARD
  if was == want then return 0 end
  if want == STANDARD then
    redis.call('DEL', K.record_format)
  else
    redis.call('SET', K.record_format, want)
  end
  emit(K.events, 'record_format_set', '', now_ms(), 'detail', want .. ' (was ' .. was .. ')')
  return 1
end

if step == 'rewritten' then
  local compact = uint(ARGV[4], 'compact records rewritten', 2^40)
  local detached = uint(ARGV[5], 'detached records rewritten', 2^40)
  local left = uint(ARGV[6], 'detached records left leased', 2^40)
  emit(K.events, 'records_rewritten', '', now_ms(), 'count', compact + detached,
    'detail', 'compact ' .. compact .. ', detached ' .. detached .. ', left leased ' .. left)
  return 1
end

fail('record_format step must be set or rewritten, got ' .. string.format('%q', tostring(step)))
