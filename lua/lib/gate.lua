-- lib/gate.lua: workflows' gates (lua/README.md, Workflows): members join a
-- gate, each counts once when it leaves for good, and the gate fires when it
-- is sealed and nothing is pending: its undecided waiters go to ord:ready,
-- where their own queue's claim decides them (lib/gate_decide.lua). Also the
-- paged deletion of finished gates' data. Layout: KEYS 35 to 41 (lib/keys.lua).
-- include: keys job_record ordering gate_record events notify
-- composed per call: wf.trimmed and the batch cache (wf.cache, wf.changed) are this call's
--
-- Its helpers are fields of one table, wf: a script may have at most 200
-- locals, and the claim, ack and nack scripts are near it.
local wf = { trimmed = false }

-- Members and outcomes are keyed "G\nid"; wf:of entries "id\nG".
function wf.entry(a, b)
  return a .. '\n' .. b
end

-- Between wf.batch_begin and wf.batch_store (an ack of many jobs), each
-- gate record is read and decoded once and written once, whatever number of
-- its members the call counts: wf.load returns the record already read (false
-- in the cache: the gate is gone), wf.save only marks it, and the deletion of
-- a gate (wf.trim) drops it from the cache. No other command of such a call
-- reads or writes wf:gates, so the stored records are the same as per member.
function wf.batch_begin()
  wf.cache, wf.changed = {}, {}
end

function wf.load(gid)
  local cache = wf.cache
  if cache and cache[gid] ~= nil then return cache[gid] or nil end
  local raw = redis.call('HGET', K.wf_gates, gid)
  local g = raw and GATE.decode(raw) or nil
  if cache then cache[gid] = g or false end
  return g
end

function wf.save(gid, g)
  local cache = wf.cache
  if not cache then
    redis.call('HSET', K.wf_gates, gid, GATE.encode(g))
    return
  end
  local changed = wf.changed
  if not changed[gid] then
    changed[gid] = true
    changed[#changed + 1] = gid
  end
  cache[gid] = g
end

-- Store the records saved since wf.batch_begin: one HSET (per 500 gates).
function wf.batch_store()
  local pairs_out = {}
  for _, gid in ipairs(wf.changed) do
    local g = wf.cache[gid]
    if g then
      pairs_out[#pairs_out + 1] = gid
      pairs_out[#pairs_out + 1] = GATE.encode(g)
    end
  end
  wf.cache, wf.changed = nil, nil
  -- In chunks: an ack of 1000 jobs, each counted by up to 100 gates, could
  -- name more gates than one unpack takes (Lua's C stack, about 8000 values).
  local CHUNK = 1000
  for from = 1, #pairs_out, CHUNK do
    redis.call('HSET', K.wf_gates, unpack(pairs_out, from, math.min(from + CHUNK - 1, #pairs_out)))
  end
end

-- Gate `gid`'s data is deleted no earlier than GATE.KEEP_MS from `now` (the
-- score is also the order gate_list.lua lists gates in).
function wf.renew(gid, now)
  redis.call('ZADD', K.wf_expire, now + GATE.KEEP_MS, gid)
end

-- Gate `gid` for new members: its record (a new open one of `kind` if
-- missing), or nil and its state when it takes no more.
function wf.for_joining(gid, kind, now)
  local g = wf.load(gid)
  if not g then return GATE.new(kind, now) end
  if g[G.state] ~= 'open' then return nil, g[G.state] end
  return g
end

-- `ids` (jobs just created with record field gate = gid) join gate `g`.
function wf.join_created(gid, g, ids, now)
  local members = {}
  for i, id in ipairs(ids) do
    members[2 * i - 1], members[2 * i] = 0, wf.entry(gid, id)
  end
  for from = 1, #members, 1000 do
    redis.call('ZADD', K.wf_members, unpack(members, from, math.min(from + 999, #members)))
  end
  g[G.total] = g[G.total] + #ids
  g[G.pending] = g[G.pending] + #ids
  wf.save(gid, g)
  wf.renew(gid, now)
end

-- What wf:outcomes stores for a member that finished as `outcome`.
wf.OUTCOME_TAG = { completed = 'c', dead = 'd', cancelled = 'x', deleted = 'r' }

-- Member `id` of gate `g` finished as `outcome` (completed | dead |
-- cancelled | deleted) with `detail` (the result or the error): its outcome
-- is stored, the gate's counts move, and the first failure is kept.
function wf.tally(gid, g, id, outcome, detail)
  local value = wf.OUTCOME_TAG[outcome]
  if outcome == 'completed' or outcome == 'dead' then value = value .. detail end
  redis.call('HSET', K.wf_outcomes, wf.entry(gid, id), value)
  g[G.pending] = g[G.pending] - 1
  if outcome == 'completed' then
    g[G.succeeded] = g[G.succeeded] + 1
    return
  end
  g[G.failed] = g[G.failed] + 1
  if g[G.first_failure] == '' then
    local words = id .. ' ' .. outcome
    if detail ~= '' then words = words .. ': ' .. detail end
    g[G.first_failure] = string.sub(words, 1, GATE.MAX_FAILURE_BYTES)
  end
end

-- Each waiter of `g` still undecided goes to ord:ready for its queue's
-- claim to decide (at most GATE.MAX_WAITERS records read); a waiter whose job is
-- gone is skipped.
function wf.wake_waiters(gid, g)
  for _, w in ipairs(g[G.waiters]) do
    if w[GW.decision] == '' then
      local raw = redis.call('HGET', K.jobs, w[GW.id])
      local m = raw and split_record(raw)
      if m and m[M.awaits] == gid and wf.is_awaiting(w[GW.id], m) then
        redis.call('ZADD', K.ord_ready, 0, w[GW.queue] .. '\n' .. pad16(m[M.seq]) .. '\n' .. w[GW.id])
        wf.count_fired(w[GW.queue], 1)
        wake_workers(w[GW.queue])
      end
    end
  end
end

-- A fired waiter is in ord:ready and still in wf:awaiting (its state is
-- awaiting until its queue's claim decides it). wf:awaiting:n counts such
-- waiters of queue Q under "Q\nfired" (a queue name has no control
-- character), so counts.lua takes them off its waiting count instead of
-- counting them twice.
function wf.fired_field(queue)
  return queue .. '\nfired'
end

function wf.count_fired(queue, by)
  local field = wf.fired_field(queue)
  if redis.call('HINCRBY', K.wf_awaiting_n, field, by) <= 0 then
    redis.call('HDEL', K.wf_awaiting_n, field)
  end
end

-- Gate `g` is sealed with nothing pending: it is done, and its waiters are
-- woken to be decided.
function wf.fire(gid, g, now)
  g[G.state], g[G.done_at] = 'done', now
  wf.renew(gid, now)
  wf.wake_waiters(gid, g)
  emit(K.events, 'gate_done', QUEUE, now, 'id', gid, 'name', g[G.kind], 'count', g[G.total],
    'detail', g[G.succeeded] .. ' succeeded, ' .. g[G.failed] .. ' failed')
end

-- Whether a waiter of `g` still waits on it (undecided or held, and its job
-- still in wf:awaiting): such a gate is kept.
function wf.has_waiting(g)
  for _, w in ipairs(g[G.waiters]) do
    local d = w[GW.decision]
    if (d == '' or d == 'held') and
        redis.call('ZSCORE', K.wf_awaiting, w[GW.queue] .. '\n' .. w[GW.id]) then
      return true
    end
  end
  return false
end

-- Delete the data of gates whose keep time passed (finished, with every
-- waiter decided; or open since their last join), at most
-- GATE.TRIM_ENTRIES entries, once per call. A gate still sealed, or with a
-- waiter still waiting, is looked at again a GATE.KEEP_MS later.
function wf.trim(now)
  if wf.trimmed then return end
  wf.trimmed = true
  local budget = GATE.TRIM_ENTRIES
  for _, gid in ipairs(redis.call('ZRANGEBYSCORE', K.wf_expire, '-inf', now, 'LIMIT', 0, 8)) do
    if budget <= 0 then return end
    local g = wf.load(gid)
    if g and (g[G.state] == 'sealed' or wf.has_waiting(g)) then
      wf.renew(gid, now)
    else
      local entries = redis.call('ZRANGEBYLEX', K.wf_members, '[' .. gid .. '\n', '(' .. gid .. '\11',
        'LIMIT', 0, budget)
      if #entries > 0 then
        redis.call('ZREM', K.wf_members, unpack(entries))
        redis.call('HDEL', K.wf_outcomes, unpack(entries))
      end
      budget = budget - #entries - 1
      if budget >= 0 then
        redis.call('HDEL', K.wf_gates, gid)
        if wf.cache then wf.cache[gid] = false end
        redis.call('ZREM', K.wf_expire, gid)
      end
    end
  end
end

-- Job `id` (record `m`) left for good as `outcome` with `detail`: it counts
-- once toward each gate it is a member of (its record's gate, and its wf:of
-- entries), and those fields are cleared in `m` (the caller stores `m` when
-- the record stays, as a dead letter's does), so it never counts again.
-- O(its gates) <= GATE.MAX_GATES_PER_JOB, each O(1) (a fire O(GATE.MAX_WAITERS)).
function wf.count(id, m, outcome, detail, now)
  if m[M.gate] == '' and m[M.more_gates] == 0 then return end
  local gids = {}
  if m[M.gate] ~= '' then gids[1] = m[M.gate] end
  if m[M.more_gates] > 0 then
    local entries = redis.call('ZRANGEBYLEX', K.wf_of, '[' .. id .. '\n', '(' .. id .. '\11',
      'LIMIT', 0, GATE.MAX_GATES_PER_JOB)
    for _, entry in ipairs(entries) do gids[#gids + 1] = string.sub(entry, #id + 2) end
    if #entries > 0 then redis.call('ZREM', K.wf_of, unpack(entries)) end
  end
  for _, gid in ipairs(gids) do
    local g = wf.load(gid)
    if g and g[G.state] ~= 'done' then
      wf.tally(gid, g, id, outcome, detail)
      if g[G.state] == 'sealed' and g[G.pending] <= 0 then wf.fire(gid, g, now) end
      wf.save(gid, g)
    end
  end
  m[M.gate], m[M.more_gates] = '', 0
  wf.trim(now)
end

-- Job `id` (record `m`) leaves wf:awaiting: its gate decided it, or it was
-- cancelled or deleted.
-- A waiter its gate fired and nothing decided yet (its decision still
-- blank) stops counting as fired.
function wf.leave_awaiting(id, m)
  local queue = m[M.queue]
  if redis.call('ZREM', K.wf_awaiting, queue .. '\n' .. id) ~= 1 then return end
  if redis.call('HINCRBY', K.wf_awaiting_n, queue, -1) <= 0 then
    redis.call('HDEL', K.wf_awaiting_n, queue)
  end
  local g = wf.load(m[M.awaits])
  if g and (g[G.state] == 'done' or g[G.state] == 'cancelled') then
    for _, w in ipairs(g[G.waiters]) do
      if w[GW.id] == id and w[GW.decision] == '' then wf.count_fired(queue, -1) end
    end
  end
end

-- Whether job `id` (record `m`, queue `queue`) waits in wf:awaiting.
function wf.is_awaiting(id, m)
  return m[M.awaits] ~= '' and redis.call('ZSCORE', K.wf_awaiting, m[M.queue] .. '\n' .. id) ~= false
end

-- Waiter `id` of gate `gid` is decided as `decision` (written into the gate
-- record; a gate already deleted has nothing to write).
function wf.decided(gid, id, decision)
  local g = wf.load(gid)
  if not g then return nil end
  for _, w in ipairs(g[G.waiters]) do
    if w[GW.id] == id then w[GW.decision] = decision end
  end
  wf.save(gid, g)
  return g
end
