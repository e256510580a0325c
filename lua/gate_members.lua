#!lua flags=no-writes,allow-oom
-- gate_members.lua: a page of a gate's members (lua/README.md, Workflows),
-- in id order, each with what became of it: a waiter reads its gate's
-- members this way, and so sees its dependencies' results.
-- A pending member of this call's queue has its state from
-- lib/job_state.lua; one of another queue (whose keys this call does not
-- declare) from its record alone: leased, awaiting, scheduled (due later),
-- else waiting (blocked and held read as waiting). A finished member has
-- its outcome (wf:outcomes) and the queue its record or kept record names.
-- include: check clock keys job_record job_state kept_record gate
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  jobs, kept, wf_members, wf_outcomes, wf_awaiting, and this queue's
--          leased, dead, waiting, scheduled, ord_ready, lim_held
--   writes nothing
-- ARGV[1] queue name   ARGV[2] wake-up channel   ARGV[3] gate id G
-- ARGV[4] cursor: '' to start, else the last id of the page before
-- ARGV[5] count (1..1000)
-- Reply: { next_cursor ('' at the end), then 4 entries per member: id,
--   queue, state or outcome (waiting | scheduled | leased | held | blocked |
--   awaiting | completed | dead | cancelled | deleted), detail (a completed
--   member's result, a dead one's error, else '') }
local OUTCOME_OF = { c = 'completed', d = 'dead', x = 'cancelled', r = 'deleted' }
queue_name(QUEUE)
local gid = text(ARGV[3], 'gate id', 64)
if gid == '' then fail('gate id must not be empty') end
local cursor = text(ARGV[4], 'cursor', 64)
local count = uint(ARGV[5], 'count', 1000)
if count < 1 then fail('count must be 1 to 1000') end

local now = now_ms()
local from = cursor == '' and '[' .. gid .. '\n' or '(' .. wf.entry(gid, cursor)
local entries = redis.call('ZRANGEBYLEX', K.wf_members, from, '(' .. gid .. '\11', 'LIMIT', 0, count)
local reply = { '' }
if #entries == count then reply[1] = string.sub(entries[#entries], #gid + 2) end

-- The state of pending member `id` (record `m`).
local function pending_state(id, m)
  if m[M.queue] == QUEUE then return (state_of(id, m)) end
  if m[M.lease_id] ~= 0 then return 'leased' end
  if wf.is_awaiting(id, m) then return 'awaiting' end
  if m[M.not_before] > now then return 'scheduled' end
  return 'waiting'
end

for _, entry in ipairs(entries) do
  local id = string.sub(entry, #gid + 2)
  local outcome = redis.call('HGET', K.wf_outcomes, entry)
  local raw = redis.call('HGET', K.jobs, id)
  local m = raw and split_record(raw)
  local queue, state, detail = m and m[M.queue] or '', 'deleted', ''
  if outcome then
    state, detail = OUTCOME_OF[string.sub(outcome, 1, 1)] or 'deleted', string.sub(outcome, 2)
    if not m then
      local kept = redis.call('HGET', K.kept, id)
      if kept then queue = decode_kept(kept)[KR.queue] end
    end
  elseif m then
    state = pending_state(id, m)
  end
  reply[#reply + 1] = id
  reply[#reply + 1] = queue
  reply[#reply + 1] = state
  reply[#reply + 1] = detail
end
return reply
