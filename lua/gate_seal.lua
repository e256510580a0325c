#!lua
-- gate_seal.lua: seal a gate (lua/README.md, Workflows): register existing
-- jobs as its members (a job's dependencies), create its waiters (a batch's
-- callbacks, the dependent job, a tree's parent), and close it to new
-- members; when nothing is pending it fires at once (lib/gate.lua).
--
-- Waiters are created in this same call, so an open gate never has any: a
-- producer that dies before sealing leaves members that run and no job
-- stuck. A waiter is a job in state awaiting: record field awaits = G, in
-- wf:awaiting, its sequence number taken, its queue added to the queue set,
-- its dedup key honoured (a waiter whose dedup key a live job holds is not
-- created and is no waiter). It enters its queue when its gate decides it
-- (lib/gate_decide.lua), through admit().
-- Dependencies: an id must be a job of the namespace (any state, awaiting
-- too), or a finished one with a trace (a dead letter, a kept record or a
-- tombstone); a finished one counts at once (completed: succeeded, with its
-- kept result; dead or cancelled: failed). Anything else refuses the call.
-- Everything is validated (the arguments, G's state, each dependency, the
-- parent's state) before the first write: a refused call writes nothing.
-- Cost: O(d + w) calls, d <= 1000, w <= 8.
-- include: check clock keys job_record job_store detached job_new kept kept_record gate_record gate events
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  jobs, kept, tombstones, dedup, dedup_ttl, wf_gates, wf_members, wf_awaiting, wf_expire
--   writes jobs, detached (a waiter's payload to detach), dedup, dedup_ttl, seq, queues, ord_ready, events, wf_gates, wf_members,
--          wf_outcomes, wf_of, wf_awaiting, wf_awaiting_n, wf_expire
-- ARGV[1] queue name (the call's routing queue; each waiter names its own)
-- ARGV[2] wake-up channel
-- ARGV[3] gate id G (1 to 64 bytes)
-- ARGV[4] kind: batch | deps | tree
-- ARGV[5] payload limit (bytes), for the waiters' payloads
-- ARGV[6] label: the producer's name for the gate, at most 256 bytes, '' = none
-- ARGV[7] d (0..1000), then d ids of existing jobs to register as members
-- then w (0..8), then per waiter: its queue, its condition (all |
--   success), its on_failure (dead | cancel | hold: what a failed member
--   does to it under success), then its job's entries as enqueue.lua's
--   header lays them out (id, payload, option count, option pairs)
-- then the parent gate id ('' = none) and the parent's kind (tree, or '' with
--   no parent): each waiter created also joins the parent as a member (a
--   subtree's root is a member of its parent's gate from its creation)
-- then the record format, as enqueue.lua's ARGV[7]: a waiter whose payload
--   is detached:N's N bytes or more is stored detached (lib/detached.lua)
-- Reply: flat, two entries per waiter in order: code, id (none for w = 0: a
-- seal of a sealed or done gate without waiters answers that too); or, refused, one
-- pair { code, detail } (nothing written):
-- code 1 created: the waiter was created under that id
-- code 0 duplicate: a live job has the waiter's dedup key; the id is that job's (it is no waiter)
-- code 2 created_earlier: a resend: G is already sealed with this waiter
-- code -1 unknown_dependency: the detail id is no job of the namespace and left no trace
-- code -2 gate_closed: G (or the parent) is not open: the detail is its state
-- code -3 too_many_gates: the detail id already counts toward 100 gates
local KINDS = { batch = true, deps = true, tree = true }
local CONDITIONS = { all = true, success = true }
local ON_FAILURE = { dead = true, cancel = true, hold = true }
queue_name(QUEUE)
local gid = text(ARGV[3], 'gate id', 64)
if gid == '' then fail('gate id must not be empty') end
local kind = ARGV[4]
if not KINDS[kind] then fail('gate kind must be batch, deps or tree, got ' .. string.format('%q', tostring(kind))) end
local limit = uint(ARGV[5], 'payload limit', 1073741824)
local label = text(ARGV[6], 'label', GATE.MAX_LABEL_BYTES)
local d = uint(ARGV[7], 'dependency count', 1000)
local deps = {}
for i = 1, d do
  deps[i] = text(ARGV[7 + i], 'dependency id', 64)
  if deps[i] == '' then fail('dependency id must not be empty') end
end
local head = 8 + d
-- 0 waiters: a batch without callbacks is sealed all the same, so that its
-- status reaches done.
local w = uint(ARGV[head], 'waiter count', GATE.MAX_WAITERS)
local p = new_parsed()
local queues, conditions, on_failures = {}, {}, {}
local b = head
for j = 1, w do
  -- The waiter's policy, its job's 3 entries at least, then the parent's 2
  -- and the record format.
  if b + 3 + 3 + 3 > ARGC then fail('waiter ' .. j .. ' of ' .. w .. ': the arguments end') end
  queues[j] = queue_name(ARGV[b + 1])
  conditions[j] = ARGV[b + 2]
  if not CONDITIONS[conditions[j]] then fail('waiter condition must be all or success, got ' .. string.format('%q', conditions[j])) end
  on_failures[j] = ARGV[b + 3]
  if not ON_FAILURE[on_failures[j]] then
    fail('waiter on_failure must be dead, cancel or hold, got ' .. string.format('%q', on_failures[j]))
  end
  b = parse_job(p, j, b + 3, limit, ARGC - 3)
end
local expected = b + 3
if ARGC ~= expected then fail('expected ' .. expected .. ' arguments, got ' .. ARGC) end
parsed_ids_checked(p)
local parent = text(ARGV[expected - 2], 'parent gate id', 64)
local parent_kind = ARGV[expected - 1]
local detach_from = detach_from_format(ARGV[expected])
if (parent == '') ~= (parent_kind == '') or (parent ~= '' and parent_kind ~= 'tree') then
  fail('parent gate kind must be tree with a parent gate id, "" without one, got ' .. string.format('%q', parent_kind))
end
if parent == gid then fail('a gate cannot be its own parent') end

local now = now_ms()
local g = wf.load(gid)
if g and g[G.state] ~= 'open' then
  -- A resend finds G sealed with the waiters it created: the same answer.
  -- Without waiters, sealing a sealed or done gate again changes nothing.
  if w == 0 and g[G.state] ~= 'cancelled' then return {} end
  local mine = {}
  for _, each in ipairs(g[G.waiters]) do mine[each[GW.id]] = true end
  local resent = false
  for j = 1, w do resent = resent or mine[p.ids[j]] == true end
  if not resent then return { -2, g[G.state] } end
  local reply = {}
  for j = 1, w do
    local id = p.ids[j]
    if mine[id] then
      reply[2 * j - 1], reply[2 * j] = 2, id
    else
      local dk = p.options[j] and p.options[j][M.dedup_key]
      reply[2 * j - 1], reply[2 * j] = 0, dk and redis.call('HGET', K.dedup, dk) or id
    end
  end
  return reply
end
local pg
if parent ~= '' then
  local parent_state
  pg, parent_state = wf.for_joining(parent, parent_kind, now)
  if not pg then return { -2, parent_state } end
end

-- Each dependency: live (it joins, counted when it finishes) or finished
-- (counted now); an id listed twice, or already a member, is taken once.
local live, finished, seen = {}, {}, {}
for _, id in ipairs(deps) do
  if not seen[id] and not redis.call('ZSCORE', K.wf_members, wf.entry(gid, id)) then
    seen[id] = true
    local m = load_meta(id)
    if m and m[M.died_at] > 0 then
      finished[#finished + 1] = { id, 'dead', m[M.error] }
    elseif m then
      local gates = (m[M.gate] ~= '' and 1 or 0) + m[M.more_gates]
      if gates >= GATE.MAX_GATES_PER_JOB then return { -3, id } end
      live[#live + 1] = { id, m }
    else
      local outcome = finished_as(id)
      if outcome == 'completed' then
        local raw = redis.call('HGET', K.kept, id)
        finished[#finished + 1] = { id, 'completed', raw and decode_kept(raw)[KR.result] or '' }
      elseif outcome == 'cancelled' then
        finished[#finished + 1] = { id, 'cancelled', '' }
      else
        return { -1, id }
      end
    end
  end
end

-- Validation is complete: from here on the script writes.
if not g then g = GATE.new(kind, now) end
g[G.kind] = kind
if label ~= '' then g[G.label] = label end
for _, dep in ipairs(live) do
  local id, m = dep[1], dep[2]
  redis.call('ZADD', K.wf_members, 0, wf.entry(gid, id))
  redis.call('ZADD', K.wf_of, 0, wf.entry(id, gid))
  m[M.more_gates] = m[M.more_gates] + 1
  store_meta(id, m)
  g[G.total], g[G.pending] = g[G.total] + 1, g[G.pending] + 1
end
for _, dep in ipairs(finished) do
  redis.call('ZADD', K.wf_members, 0, wf.entry(gid, dep[1]))
  g[G.total], g[G.pending] = g[G.total] + 1, g[G.pending] + 1
  wf.tally(gid, g, dep[1], dep[2], dep[3])
end

local reply, waiters, joining, created = {}, {}, {}, {}
local first_seq = redis.call('INCRBY', K.seq, w) - w + 1
for j = 1, w do
  local id, queue = p.ids[j], queues[j]
  local dk = p.options[j] and p.options[j][M.dedup_key]
  local existing = dk and live_duplicate(dk, now, created)
  if existing then
    reply[2 * j - 1], reply[2 * j] = 0, existing
  else
    local m = parsed_record(p, j, queue, first_seq + j - 1, now)
    m[M.awaits] = gid
    if pg then
      m[M.gate] = parent
      joining[#joining + 1] = id
    end
    created[id] = true
    store_new_job(id, m, p.payloads[j], detach_from)
    take_dedup(id, m, now)
    redis.call('ZADD', K.wf_awaiting, 0, queue .. '\n' .. id)
    redis.call('HINCRBY', K.wf_awaiting_n, queue, 1)
    redis.call('SADD', K.queues, queue)
    waiters[#waiters + 1] = { id, queue, conditions[j], on_failures[j], '' }
    reply[2 * j - 1], reply[2 * j] = 1, id
  end
end
if pg and #joining > 0 then wf.join_created(parent, pg, joining, now) end
g[G.waiters] = waiters
g[G.state], g[G.sealed_at] = 'sealed', now
wf.renew(gid, now)
if g[G.pending] <= 0 then wf.fire(gid, g, now) end
wf.save(gid, g)
wf.trim(now)
return reply
