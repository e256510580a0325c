-- lib/kept.lua: what a queue keeps of its finished jobs (its retention
-- policy), keeping a finished job, trimming what is kept within the policy's
-- bounds (a bounded amount per call), tombstones and their own expiry, and
-- whether a job that is gone was cancelled.
-- include: keys kept_record
--
-- The policy of queue Q is the field Q of {ns}:retention (K.retention),
-- read by lib/retention_spec.lua, its form lib/kept_record.lua's.
-- A kept job past its age bound, and a tombstone past its own, are already
-- gone to every read (kept_get.lua, kept_list.lua, retention.lua show:
-- lib/kept_record.lua kept_expired, a tombstone's expiry below); the trim
-- here is what frees their memory, at the queue's next ack or cancel.
-- The field "Q:bytes" (a queue name has no ':') counts the bytes Q's kept
-- jobs are charged: what one costs in Redis memory, its id twice (hash field
-- and zset member), its record plus a quarter (the allocator rounds a block
-- up by as much), and KEPT_ENTRY_OVERHEAD for the two entries' structures.
-- Measured with MEMORY USAGE on redis-server 7.0.15 (hashtable-encoded
-- hash, skiplist zset): 5000 acks of ~470-byte records under a 256 KiB cap
-- used 718 bytes a job where 2 * id + record + 96 charged 618; this charge
-- gives 805 (tests/tests/single_server/kept_results.rs checks the cap).
-- A tombstone's score in {ns}:tombstones:at (K.tombstones_at) is when it
-- expires.

local KEPT_ENTRY_OVERHEAD = 160
-- Tombstones of a queue without a policy (its cancelled jobs) last a day.
local DEFAULT_TOMBSTONE_MS = 86400000
-- Each call forgets at most this many kept records and tombstones beyond
-- twice what it added, so the sets follow a flood down without any call
-- walking them whole.
local TRIM_FLOOR = 16
local TRIM_AT_MOST = 1000

local function bytes_field()
  return QUEUE .. ':bytes'
end

local function kept_charge(id, raw)
  return 2 * #id + #raw + math.ceil(#raw / 4) + KEPT_ENTRY_OVERHEAD
end

-- Leave tombstones for these ids (finished at `ats`, with `outcome`),
-- expiring `tombstone_ms` from now; with `aged` (the policy, for records
-- forgotten for their age), from when the age bound passed, which reads
-- already treated as the moment they left (lib/kept_record.lua
-- kept_expired): a tombstone never shows again once a read stopped showing
-- it, and one already expired is not written.
local function bury(ids, ats, outcome, now, tombstone_ms, aged)
  if #ids == 0 then return end
  local values, expiries = {}, {}
  for i, id in ipairs(ids) do
    local expiry = now + tombstone_ms
    if aged then expiry = aged_tombstone_expiry(ats[i], aged) end
    if expiry > now then
      values[#values + 1] = id
      values[#values + 1] = tombstone_value(outcome, ats[i])
      expiries[#expiries + 1] = expiry
      expiries[#expiries + 1] = id
    end
  end
  if #values == 0 then return end
  redis.call('HSET', K.tombstones, unpack(values))
  redis.call('ZADD', K.tombstones_at, unpack(expiries))
end

-- Keep finished jobs: `ids` with their encoded kept records `raws`, all of
-- `outcome`, finished at `now`, indexed in `index` (K.completed or
-- K.cancelled). One HSET, ZADD and HINCRBY for the batch.
local function keep(ids, raws, index, now)
  if #ids == 0 then return end
  local pairs_, scores, charged = {}, {}, 0
  for i, id in ipairs(ids) do
    pairs_[#pairs_ + 1] = id
    pairs_[#pairs_ + 1] = raws[i]
    scores[#scores + 1] = now
    scores[#scores + 1] = id
    charged = charged + kept_charge(id, raws[i])
  end
  redis.call('HSET', K.kept, unpack(pairs_))
  redis.call('ZADD', index, unpack(scores))
  redis.call('HINCRBY', K.retention, bytes_field(), charged)
end

-- Forget the kept records at the head of `index` (flat id, score list
-- `head`), leaving tombstones (`aged`: bury's). Returns the bytes freed.
local function forget(index, outcome, head, now, tombstone_ms, aged)
  local ids, ats = {}, {}
  for i = 1, #head, 2 do
    ids[#ids + 1] = head[i]
    ats[#ats + 1] = tonumber(head[i + 1])
  end
  if #ids == 0 then return 0 end
  local raws = redis.call('HMGET', K.kept, unpack(ids))
  local freed = 0
  for i, id in ipairs(ids) do
    if raws[i] then freed = freed + kept_charge(id, raws[i]) end
  end
  redis.call('HDEL', K.kept, unpack(ids))
  redis.call('ZREM', index, unpack(ids))
  bury(ids, ats, outcome, now, tombstone_ms, aged)
  if freed > 0 then redis.call('HINCRBY', K.retention, bytes_field(), -freed) end
  return freed, #ids
end

-- Drop expired tombstones, at most `budget`.
local function trim_tombstones(now, budget)
  local expired = redis.call('ZRANGEBYSCORE', K.tombstones_at, '-inf', now, 'LIMIT', 0, budget)
  if #expired == 0 then return end
  redis.call('HDEL', K.tombstones, unpack(expired))
  redis.call('ZREM', K.tombstones_at, unpack(expired))
end

-- Bring this queue's kept jobs back within `policy`, forgetting at most 2 * added + TRIM_FLOOR records
-- (TRIM_AT_MOST at most), oldest first: by age, then count (each index on
-- its own), then bytes (both indexes together, the older head first). Also
-- drops expired tombstones within the same budget.
local function trim_kept(policy, now, added)
  local budget = math.min(2 * added + TRIM_FLOOR, TRIM_AT_MOST)
  local tombstone_ms = policy.tombstone_ms
  local sets = { { K.completed, 'completed' }, { K.cancelled, 'cancelled' } }
  local used = tonumber(redis.call('HGET', K.retention, bytes_field()) or '0')
  for _, set in ipairs(sets) do
    local index, outcome = set[1], set[2]
    if policy.age_ms > 0 and budget > 0 then
      local old = redis.call('ZRANGEBYSCORE', index, '-inf', now - policy.age_ms,
        'WITHSCORES', 'LIMIT', 0, budget)
      local freed, n = forget(index, outcome, old, now, tombstone_ms, policy)
      used, budget = used - freed, budget - (n or 0)
    end
    if policy.count > 0 and budget > 0 then
      local over = redis.call('ZCARD', index) - policy.count
      if over > 0 then
        local head = redis.call('ZRANGE', index, 0, math.min(over, budget) - 1, 'WITHSCORES')
        local freed, n = forget(index, outcome, head, now, tombstone_ms)
        used, budget = used - freed, budget - (n or 0)
      end
    end
  end
  while policy.bytes > 0 and used > policy.bytes and budget > 0 do
    local a = redis.call('ZRANGE', K.completed, 0, 0, 'WITHSCORES')
    local b = redis.call('ZRANGE', K.cancelled, 0, 0, 'WITHSCORES')
    if not a[1] and not b[1] then break end
    local older = sets[1]
    if not a[1] or (b[1] and tonumber(b[2]) < tonumber(a[2])) then older = sets[2] end
    -- A few at a time from the older index: each costs one round of calls.
    local n = math.min(budget, 8)
    local head = redis.call('ZRANGE', older[1], 0, n - 1, 'WITHSCORES')
    local freed, forgot = forget(older[1], older[2], head, now, tombstone_ms)
    used, budget = used - freed, budget - (forgot or 0)
  end
  if budget > 0 then trim_tombstones(now, budget) end
end

-- What a job that is no longer in {ns}:jobs became: 'completed' or
-- 'cancelled' and when, from its kept record or its tombstone; nil when
-- neither is left.
local function finished_as(id)
  local raw = redis.call('HGET', K.kept, id)
  if raw then
    local k = decode_kept(raw)
    return k[KR.outcome], k[KR.finished_at]
  end
  raw = redis.call('HGET', K.tombstones, id)
  if raw then return tombstone_read(raw) end
  return nil, 0
end
