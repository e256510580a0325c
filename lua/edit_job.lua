#!lua
-- edit_job.lua: replace the payload of one job that is not running
-- (waiting, scheduled, held, blocked, awaiting or dead); everything else about
-- the job (its place, attempts, keys, times) stays as it was. A held or
-- awaiting job is edited like a waiting one: it runs with the new payload once
-- its limit key or its gate lets it.
--
-- The state is checked in this script, so an edit and a claim racing it are
-- ordered by Redis: an edit that answers `edited` ran before any claim, and
-- that claim hands out the new payload; a claim that ran first makes the
-- edit answer `leased` and change nothing. The driver validates the payload
-- as an enqueue does (JSON, nesting, the handle's payload limit: the same
-- function); the size bound is checked here again, as enqueue.lua does.
--
-- No allow-oom: a larger payload grows memory; out of memory, nothing runs.
-- include: check clock keys job_record detached job_state events
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  leased, dead, waiting, scheduled, ord_ready, lim_held
--   writes jobs, detached, events
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] payload limit (bytes)   ARGV[4] job id   ARGV[5] the new payload (JSON text)
-- last ARGV, optional: the operator's actor, marked (lib/events.lua: ARGC leaves it out)
-- Event: `edited` (id, detail the sizes, never the bytes: "payload 40 -> 52
-- bytes") when the payload changed; the same payload again writes none.
-- Reply: { code, state } with state the job's state (waiting | scheduled |
-- held | blocked | awaiting | dead | leased), "" when not found.
-- code 1 edited: the job's payload is the new one
-- code 0 not_found: no job with this id in this queue
-- code -1 leased: the job is running under a lease; nothing changed
queue_name(QUEUE)
local limit = uint(ARGV[3], 'payload limit', 1073741824)
local id = text(ARGV[4], 'job id', 64)
if #id == 0 then fail('job id must not be empty') end
local payload = ARGV[5]
if type(payload) ~= 'string' or #payload == 0 or #payload > limit then
  fail('payload of job ' .. id .. ' is ' .. #(payload or '') .. ' bytes; accepted: 1 to ' .. limit)
end

local raw = redis.call('HGET', K.jobs, id)
if not raw then return { 0, '' } end
local m, before = split_record(raw)
if m[M.queue] ~= QUEUE then return { 0, '' } end
local state = state_of(id, m)
if state == 'leased' then return { -1, state } end
-- A detached record (lib/job_record.lua) keeps its meta and takes the new
-- payload apart, whatever its size: the namespace's format decides at
-- enqueue, and no other record changes layout after it.
local detached = before == ''
if detached then before = whole_payload(id, before) end
if payload ~= before then
  if detached then redis.call('HSET', K.detached, id, payload)
  else redis.call('HSET', K.jobs, id, encode_record(m, payload)) end
  emit(K.events, 'edited', QUEUE, now_ms(), 'id', id, 'detail',
    'payload ' .. #before .. ' -> ' .. #payload .. ' bytes')
end
return { 1, state }
