#!lua flags=allow-oom
-- delete_dead.lua: delete dead letters for good: the listed ids, or, with no
-- ids, up to `limit` of the queue's oldest (callers loop to purge).
-- allow-oom: deleting frees memory.
-- Their notes (lib/notes.lua) go too: two HDELs a call for all its ids,
-- cheaper than reading each record's noted flag; so do detached payloads
-- (lib/job_record.lua), one HDEL a call.
-- include: check clock keys notes events
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  nothing else
--   writes dead, jobs, detached, progress, logs, events
-- ARGV[1] queue name   ARGV[2] wake-up channel   ARGV[3] limit (1..1000)
-- ARGV[4..] job ids (at most `limit`)
-- last ARGV, optional: the operator's actor, marked (lib/events.lua: ARGC leaves it out)
-- Reply: { deleted, not_dead, dead_left }
queue_name(QUEUE)
local limit = uint(ARGV[3], 'delete limit', 1000)
if limit < 1 then fail('delete limit must be at least 1') end
local ids = {}
for i = 4, ARGC do ids[#ids + 1] = text(ARGV[i], 'job id', 64) end
if #ids > limit then fail('at most ' .. limit .. ' ids per call, got ' .. #ids) end
if #ids == 0 then ids = redis.call('ZRANGE', K.dead, 0, limit - 1) end
local deleted, missing, gone = 0, 0, {}
for _, id in ipairs(ids) do
  if redis.call('ZREM', K.dead, id) == 1 then
    redis.call('HDEL', K.jobs, id)
    deleted = deleted + 1
    gone[deleted] = id
  else
    missing = missing + 1
  end
end
forget_notes(gone)
if deleted > 0 then redis.call('HDEL', K.detached, unpack(gone)) end
-- Named for what the operator did: listed ids deleted, or the oldest purged.
if deleted > 0 and ARGC < 4 then
  emit(K.events, 'purged', QUEUE, now_ms(), 'count', deleted, 'detail', 'dead')
elseif deleted == 1 then
  emit(K.events, 'deleted', QUEUE, now_ms(), 'count', '1', 'id', gone[1], 'detail', 'dead')
elseif deleted > 0 then
  emit(K.events, 'deleted', QUEUE, now_ms(), 'count', deleted, 'detail', 'dead')
end
return { deleted, missing, redis.call('ZCARD', K.dead) }
