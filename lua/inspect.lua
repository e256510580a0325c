#!lua flags=no-writes,allow-oom
-- inspect.lua: one job's record, payload and current state, read atomically.
-- KEYS: the common queue key list (lua/lib.lua).
-- ARGV[1] queue name   ARGV[2] wake-up channel   ARGV[3] job id
-- Reply: {} when no such job in this queue, else
--   { state, meta, payload, now_ms } with state one of
--   waiting | scheduled | leased | dead | blocked
queue_name(QUEUE)
local id = text(ARGV[3], 'job id', 64)
local raw = redis.call('HGET', K.jobs, id)
if not raw then return {} end
local m = cmsgpack.unpack(raw)
if m[M.queue] ~= QUEUE then return {} end
local state = 'blocked'
if redis.call('ZSCORE', K.leased, id) then state = 'leased'
elseif redis.call('ZSCORE', K.dead, id) then state = 'dead'
elseif redis.call('ZSCORE', K.waiting, id) then state = 'waiting'
elseif redis.call('ZSCORE', K.scheduled, id) then state = 'scheduled'
elseif redis.call('ZSCORE', K.ord_ready, QUEUE .. '\n' .. pad16(m[M.seq]) .. '\n' .. id) then state = 'waiting'
end
return { state, raw, redis.call('HGET', K.payloads, id) or '', now_ms() }
