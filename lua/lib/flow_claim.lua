-- lib/flow_claim.lua: what a claim of a flow-aware queue does (lib/flow.lua):
-- the queue-wide room, the keys whose time came, the merge of the waiting
-- jobs with the ready keys, and the accounting of what was leased.
--
-- Cost per claim call: O(taken jobs + keys woken (at most WAKE_PER_CALL) +
-- ready keys found without room (at most 2 * limit + 16)) redis calls; held
-- jobs of keys without room are never read.
-- include: keys job_record waiting flow lease

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
  return any_waiting() or redis.call('ZCARD', K.lim_ready) > 0
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
-- key of each keyed id, and the keys visited ({ key, counts, members read,
-- taken members, ... }), for flow_leased to account once the jobs are
-- leased.
--
-- The limits of the ready keys, and the leased counts of those with a
-- concurrency, are read in one HMGET each for a run of keys, not per key:
-- keys are first visited in their ready order (a key's heap score is its
-- ready score until it is first visited), so each read takes the next run
-- of them, as many as the jobs still wanted. Their held counts and
-- push-backs are not read: a ready key has held jobs, and is not pushed
-- back (push_back is always followed by its key's refresh, which takes a
-- pushed-back key off the ready index until its wake entry comes due).
local function pop_flow(budget, limit, now)
  local ready = redis.call('ZRANGE', K.lim_ready, 0, budget - 1, 'WITHSCORES')
  if #ready == 0 then return pop_waiting(budget), {}, {} end
  local heap, order, ready_score = {}, {}, {}
  for i = 1, #ready, 2 do
    local key, score = ready[i], tonumber(ready[i + 1])
    heap[#heap + 1] = { score, key }
    order[#order + 1] = key
    ready_score[key] = score
  end
  local w_ids, w_scores, w_from = waiting_heads(budget)
  local ids, key_of, touched, state = {}, {}, {}, {}
  local leased_of, loaded = {}, 0
  local wi, zn, fn, skipped = 1, 0, 0, 0
  local max_skipped = 2 * limit + 16

  -- Read the limits of the next run of ready keys, and the leased counts of
  -- those with a concurrency (a lookup in the lim hash costs about 2 us when
  -- it is a listpack of a few hundred fields).
  local function load_next()
    local run, fields, counted = {}, {}, {}
    for i = loaded + 1, math.min(#order, loaded + math.max(budget - #ids, 1)) do
      run[#run + 1] = order[i]
    end
    loaded = loaded + #run
    load_key_limits(run)
    for _, key in ipairs(run) do
      leased_of[key] = 0
      if key_limits[key].c > 0 then
        counted[#counted + 1] = key
        fields[#fields + 1] = 'u\n' .. key
      end
    end
    if #fields > 0 then
      local v = redis.call('HMGET', K.lim, unpack(fields))
      for i, key in ipairs(counted) do leased_of[key] = tonumber(v[i] or '0') end
    end
  end

  -- Fetch up to `want` more of key s's held members, after those it has.
  -- Asking one more than will be taken shows the key's next best job (its
  -- new ready score) without another call; fewer than asked means the
  -- key's held set is read to its end.
  local function fetch(s, want)
    local from = s.members[#s.members]
    from = from and '(' .. from or key_from(s.key)
    local got = redis.call('ZRANGEBYLEX', K.lim_held, from, key_to(s.key), 'LIMIT', 0, want)
    for _, member in ipairs(got) do s.members[#s.members + 1] = member end
    if #got < want then s.read_all = true end
    s.chunk = s.chunk * 2
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
        while not leased_of[key] and loaded < #order do load_next() end
        local leased = leased_of[key] or 0
        s = { key = key, leased = leased, ready_score = ready_score[key],
          room = key_room(key, now, leased, 0),
          members = {}, at = 1, taken = {}, chunk = 4 }
        state[key] = s
        touched[#touched + 1] = s
      end
      if s.room > #s.taken and s.at > #s.members and not s.read_all then
        fetch(s, math.min(s.chunk, s.room - #s.taken, budget - #ids) + 1)
      end
      local member = s.room > #s.taken and s.members[s.at]
      if not member then
        -- No room after all, or no held job: the key leaves the heap (its
        -- entry is put right by flow_leased).
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
          if s.at > #s.members and not s.read_all then
            fetch(s, math.min(s.chunk, s.room - #s.taken, budget - #ids) + 1)
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

-- Key s (visited by pop_flow) after its taken jobs left its held set:
-- `held` of its jobs are held (nil: none was taken, its count is as it
-- was) and `leased` leased. Its entries, as refresh would put them, go into
-- the writes `w`, mostly from what pop_flow read. A key that stays ready
-- was ready, so it has no wake entry to remove (a wake entry left by
-- limits_set is a re-check, harmless: the woken key is refreshed).
local function settle_visited(w, s, held, leased, now)
  local key = s.key
  if held and held <= 0 then
    w.del[#w.del + 1] = 'h\n' .. key
    write_idle(w, key)
    return
  end
  -- A ready key has held jobs (its count is not read when none was taken).
  local room, reopens = key_room(key, now, leased, 0)
  if room <= 0 then
    write_no_room(w, key, reopens)
    return
  end
  local next_member = s.members[s.at]
  if next_member then
    local best = held_score(key, next_member)
    if best ~= s.ready_score then write_ready(w, key, best) end
  elseif s.read_all then
    -- The count says held, the set has none: repair the count.
    w.del[#w.del + 1] = 'h\n' .. key
    write_idle(w, key)
  else
    settle_held_key(w, key, leased, 0, now)
  end
end

-- Record what the claim leased (`leased`: id, record pairs from lease_jobs):
-- each key's taken jobs leave its held set, its leased count grows by those
-- actually leased (a taken job whose record was gone is dropped), its starts
-- are recorded while a rate applies to it, and its ready entry is put right;
-- then the queue's own starts while a queue-wide rate applies. One command
-- of each kind for all the keys (the held-set removals, the count writes,
-- the keys' starts, the index entries), but the trim of each rated key's
-- window.
local function flow_leased(leased, key_of, touched, spec, now)
  local leases_of = {}
  local queue_starts, members = {}, {}
  local queue_start = spec.qr > 0 and start_member('', now, '')
  for i = 1, #leased, 2 do
    local id = leased[i]
    local key = key_of[id]
    if key or spec.qr > 0 then
      local lease = string.format('%d', leased_lease_id(leased[i + 1]))
      if key then
        local list = leases_of[key]
        if not list then
          list = {}
          leases_of[key] = list
        end
        list[#list + 1] = lease
      end
      if queue_start then
        queue_starts[#queue_starts + 1] = 0
        queue_starts[#queue_starts + 1] = queue_start .. lease
      end
    end
  end
  if #queue_starts > 0 then
    redis.call('ZREMRANGEBYLEX', K.lim_starts, key_from(''), '(' .. string.sub(window_from('', spec.qp, now), 2))
  end
  local w = new_key_writes()
  local taken = {}
  local held_now, leased_now = {}, {}
  for _, s in ipairs(touched) do
    local key = s.key
    for _, member in ipairs(s.taken) do taken[#taken + 1] = member end
    if #s.taken > 0 then held_now[key] = redis.call('HINCRBY', K.lim, 'h\n' .. key, -#s.taken) end
    local started = leases_of[key]
    -- (the leased count read is 0 for a key without a concurrency: unused)
    leased_now[key] = s.leased
    if started then
      leased_now[key] = redis.call('HINCRBY', K.lim, 'u\n' .. key, #started)
      local l = key_limit(key)
      if l.r > 0 then
        redis.call('ZREMRANGEBYLEX', K.lim_starts, key_from(key), '(' .. string.sub(window_from(key, l.p, now), 2))
        local key_start = start_member(key, now, '')
        for _, lease in ipairs(started) do
          members[#members + 1] = 0
          members[#members + 1] = key_start .. lease
        end
      end
    end
  end
  if #taken > 0 then redis.call('ZREM', K.lim_held, unpack(taken)) end
  -- The starts are in before any key's room is judged: a rate counts them.
  if #members > 0 then redis.call('ZADD', K.lim_starts, unpack(members)) end
  if #queue_starts > 0 then redis.call('ZADD', K.lim_starts, unpack(queue_starts)) end
  for _, s in ipairs(touched) do settle_visited(w, s, held_now[s.key], leased_now[s.key], now) end
  flush_key_writes(w)
end
