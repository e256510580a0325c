-- lib/flow_claim.lua: what a claim of a flow-aware queue does (lib/flow.lua):
-- the queue-wide room, the keys whose time came, the merge of the waiting
-- jobs with the ready keys, and the accounting of what was leased.
--
-- Cost per claim call: O(taken jobs + keys woken (at most WAKE_PER_CALL) +
-- ready keys found without room (at most 2 * limit + 16)) redis calls; held
-- jobs of keys without room are never read.
-- include: keys job_record waiting flow

local WAKE_PER_CALL = 100

-- How many jobs of the queue may start now (math.huge: no queue-wide limit),
-- and, when none may because of its rate or a push-back, when that ends.
local function queue_room(spec, now)
  local pushed = tonumber(redis.call('HGET', K.lim, 'p\n') or '0')
  if pushed > now then return 0, pushed end
  local room = math.huge
  if spec.qc > 0 then room = spec.qc - redis.call('ZCARD', K.leased) end
  if room <= 0 then return 0 end
  if spec.qr > 0 then
    local left, reopens = rate_room('', spec.qr, spec.qp, now)
    if left <= 0 then return 0, reopens end
    if left < room then room = left end
  end
  return room
end

-- Keys whose rate window or push-back ended by now get their place back.
local function wake_due_keys(now, limit)
  for _, key in ipairs(redis.call('ZRANGEBYSCORE', K.lim_wake, '-inf', now, 'LIMIT', 0, limit)) do
    refresh(key, now)
  end
end

-- True when jobs wait to be claimed: waiting ones or ready keys.
local function flow_jobs_wait()
  return waiting_count() > 0 or redis.call('ZCARD', K.lim_ready) > 0
end

-- `freed` leases of a flow-aware queue ended (or none of the queue's):
-- true when the queue was at its queue-wide concurrency, is below it now and
-- jobs wait, so idle workers must be woken.
local function queue_slots_freed(freed)
  local spec = flow_spec()
  if not spec or spec.qc == 0 then return false end
  local leased = redis.call('ZCARD', K.leased)
  return leased < spec.qc and leased + freed >= spec.qc and flow_jobs_wait()
end

-- The first `limit` waiting jobs in claim order, without taking them: ids,
-- scores and where each is ('z' the zset, 'f' the fifo list).
local function waiting_heads(limit)
  local fifo = redis.call('LRANGE', K.fifo, 0, limit - 1)
  local zset = redis.call('ZRANGE', K.waiting, 0, limit - 1, 'WITHSCORES')
  local records = #fifo > 0 and redis.call('HMGET', K.jobs, unpack(fifo)) or {}
  local ids, scores, from = {}, {}, {}
  local z, f = 1, 1
  while #ids < limit and (zset[z] or fifo[f]) do
    -- A fifo job whose record is missing scores lowest: taken and dropped.
    local fifo_score = fifo[f] and (records[f] and FIFO_BASE + split_record(records[f])[M.seq] or -1)
    local n = #ids + 1
    if fifo_score and (not zset[z] or fifo_score < tonumber(zset[z + 1])) then
      ids[n], scores[n], from[n] = fifo[f], fifo_score, 'f'
      f = f + 1
    else
      ids[n], scores[n], from[n] = zset[z], tonumber(zset[z + 1]), 'z'
      z = z + 2
    end
  end
  return ids, scores, from
end

-- A min-heap of ready keys: entries { score, key }.
local function heap_down(heap, i)
  local n = #heap
  while true do
    local l, r, s = 2 * i, 2 * i + 1, i
    if l <= n and heap[l][1] < heap[s][1] then s = l end
    if r <= n and heap[r][1] < heap[s][1] then s = r end
    if s == i then return end
    heap[i], heap[s] = heap[s], heap[i]
    i = s
  end
end

local function heap_pop(heap)
  local n = #heap
  heap[1] = heap[n]
  heap[n] = nil
  if n > 2 then heap_down(heap, 1) end
end

-- Take up to `budget` due jobs in claim order (priority, then seq) from the
-- fifo list, the waiting zset and the ready keys. Taking from a key takes
-- its best held job, while its room lasts. Returns the ids (in order), the
-- key of each keyed id, and the keys taken from ({ key, taken members }),
-- for flow_leased to account once the jobs are leased.
local function pop_flow(budget, limit, now)
  local ready = redis.call('ZRANGE', K.lim_ready, 0, budget - 1, 'WITHSCORES')
  if #ready == 0 then return pop_waiting(budget), {}, {} end
  local heap = {}
  for i = 1, #ready, 2 do heap[#heap + 1] = { tonumber(ready[i + 1]), ready[i] } end
  local w_ids, w_scores, w_from = waiting_heads(budget)
  local ids, key_of, touched, state = {}, {}, {}, {}
  local wi, zn, fn, skipped = 1, 0, 0, 0
  local max_skipped = 2 * limit + 16

  -- Fetch up to `want` more of key s's held members, after those it has.
  local function fetch(s, want)
    local from = s.members[#s.members]
    from = from and '(' .. from or key_from(s.key)
    local got = redis.call('ZRANGEBYLEX', K.lim_held, from, key_to(s.key), 'LIMIT', 0, want)
    for _, member in ipairs(got) do s.members[#s.members + 1] = member end
  end

  while #ids < budget do
    local top = heap[1]
    if w_ids[wi] and (not top or w_scores[wi] < top[1]) then
      ids[#ids + 1] = w_ids[wi]
      if w_from[wi] == 'z' then zn = zn + 1 else fn = fn + 1 end
      wi = wi + 1
    elseif not top then
      break
    else
      local key = top[2]
      local s = state[key]
      if not s then
        local leased, _, pushed = key_counts(key)
        local room = key_room(key, now, leased, pushed)
        s = { key = key, room = room, members = {}, at = 1, taken = {}, chunk = 4 }
        state[key] = s
        touched[#touched + 1] = s
      end
      local want = math.min(s.chunk, s.room - #s.taken, budget - #ids) + 1
      if s.room > #s.taken and s.at > #s.members then
        fetch(s, want)
        s.chunk = s.chunk * 2
      end
      local member = s.room > #s.taken and s.members[s.at]
      if not member then
        -- No room after all, or no held job: the key leaves the heap (its
        -- entry is put right by flow_leased's refresh).
        heap_pop(heap)
        if #s.taken == 0 then
          skipped = skipped + 1
          if skipped > max_skipped then break end
        end
      else
        s.at = s.at + 1
        s.taken[#s.taken + 1] = member
        local id = held_id(key, member)
        ids[#ids + 1] = id
        key_of[id] = key
        if #s.taken >= s.room or #ids >= budget then
          heap_pop(heap)
        else
          if s.at > #s.members then
            fetch(s, math.min(s.chunk, s.room - #s.taken, budget - #ids) + 1)
            s.chunk = s.chunk * 2
          end
          local next_member = s.members[s.at]
          if next_member then
            top[1] = held_score(key, next_member)
            heap_down(heap, 1)
          else
            heap_pop(heap)
          end
        end
      end
    end
  end
  if zn > 0 then redis.call('ZREMRANGEBYRANK', K.waiting, 0, zn - 1) end
  if fn > 0 then redis.call('LTRIM', K.fifo, fn, -1) end
  return ids, key_of, touched
end

-- Record what the claim leased (`leased`: id, record pairs from lease_jobs):
-- each key's taken jobs leave its held set, its leased count grows by those
-- actually leased (a taken job whose record was gone is dropped), its starts
-- are recorded while a rate applies to it, and its ready entry is put right;
-- then the queue's own starts while a queue-wide rate applies.
local function flow_leased(leased, key_of, touched, spec, now)
  local leases_of = {}
  local queue_starts = {}
  for i = 1, #leased, 2 do
    local id = leased[i]
    local _, lease_id = cmsgpack.unpack_limit(leased[i + 1], 1, 3)
    local lease = string.format('%d', lease_id)
    local key = key_of[id]
    if key then
      local list = leases_of[key]
      if not list then
        list = {}
        leases_of[key] = list
      end
      list[#list + 1] = lease
    end
    if spec.qr > 0 then
      queue_starts[#queue_starts + 1] = 0
      queue_starts[#queue_starts + 1] = start_member('', now, lease)
    end
  end
  for _, s in ipairs(touched) do
    local key = s.key
    if #s.taken > 0 then
      redis.call('ZREM', K.lim_held, unpack(s.taken))
      if redis.call('HINCRBY', K.lim, 'h\n' .. key, -#s.taken) <= 0 then
        redis.call('HDEL', K.lim, 'h\n' .. key)
      end
    end
    local started = leases_of[key]
    if started then
      redis.call('HINCRBY', K.lim, 'u\n' .. key, #started)
      local l = key_limit(key)
      if l.r > 0 then
        local members = {}
        for _, lease in ipairs(started) do
          members[#members + 1] = 0
          members[#members + 1] = start_member(key, now, lease)
        end
        redis.call('ZREMRANGEBYLEX', K.lim_starts, key_from(key), '(' .. string.sub(window_from(key, l.p, now), 2))
        redis.call('ZADD', K.lim_starts, unpack(members))
      end
    end
    refresh(key, now)
  end
  if #queue_starts > 0 then
    redis.call('ZREMRANGEBYLEX', K.lim_starts, key_from(''), '(' .. string.sub(window_from('', spec.qp, now), 2))
    redis.call('ZADD', K.lim_starts, unpack(queue_starts))
  end
end
