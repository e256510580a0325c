#!lua flags=no-writes,allow-oom
-- inspect.lua: one job's record, payload and current state, read atomically.
-- include: check clock keys job_record detached waiting ordering flow
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  jobs, detached, waiting, scheduled, leased, dead, ord_ready, lim_held, wf_awaiting
--   writes nothing
-- ARGV[1] queue name   ARGV[2] wake-up channel   ARGV[3] job id
-- Reply: {} when no such job in this queue, else
--   { state, meta, payload, now_ms, score } with state one of
--   waiting | scheduled | leased | dead | held | awaiting | blocked, and score
--   the job's score in its state's sorted set ("" when blocked, awaiting (on
--   its gate, record field awaits: lib/gate.lua) or released): the due
--   time when scheduled, the lease expiry when leased, died-at when dead; a
--   held job's (due, held back by its limit key: lib/flow.lua) is its
--   claim-order score.
queue_name(QUEUE)
local id = text(ARGV[3], 'job id', 64)
local raw = redis.call('HGET', K.jobs, id)
if not raw then return {} end
local m, payload = split_record(raw)
if m[M.queue] ~= QUEUE then return {} end
local state, score = 'blocked', ''
-- Each state's set, named so the composer declares it (lib/keys.lua).
for _, candidate in ipairs({ { 'leased', K.leased }, { 'dead', K.dead }, { 'waiting', K.waiting },
    { 'scheduled', K.scheduled } }) do
  local found = redis.call('ZSCORE', candidate[2], id)
  if found then
    state, score = candidate[1], found
    break
  end
end
if state == 'blocked' and m[M.limit_key] ~= '' and
    redis.call('ZSCORE', K.lim_held, held_member(m[M.limit_key], waiting_score(m), id)) then
  state, score = 'held', string.format('%d', waiting_score(m))
elseif state == 'blocked' and m[M.awaits] ~= '' and
    redis.call('ZSCORE', K.wf_awaiting, QUEUE .. '\n' .. id) then
  state = 'awaiting'
elseif state == 'blocked' then
  if m[M.ordering_key] == '' and m[M.limit_key] == '' then
    -- Not in any sorted set and no ordering key to be blocked behind: only
    -- the fifo list holds such a job (it has no score there; its claim-order
    -- score is implied by its seq).
    state, score = 'waiting', string.format('%d', FIFO_BASE + m[M.seq])
  elseif redis.call('ZSCORE', K.ord_ready, QUEUE .. '\n' .. pad16(m[M.seq]) .. '\n' .. id) then
    state = 'waiting'
  end
end
return { state, string.sub(raw, 1, #raw - #payload), whole_payload(id, payload), now_ms(), score }
