-- lib/flow.lua: flow control (issue 15): the limits of a queue and of its
-- limit keys, and the accounting that keeps them exact.
--
-- A queue is flow-aware once {ns}:limits has its field (K.limits, "Q"):
-- "qc qr qp kc kr kp", queue concurrency, queue rate max, queue rate per_ms,
-- each-key concurrency, each-key rate max, each-key per_ms (0 = none). Field
-- "Q\nK" overrides the each-key part for key K ("c r p"). The field is never
-- deleted (clearing writes zeros), so the counts below stay exact.
--
-- Per key K of the queue (K.lim): "u\nK" its leased jobs, "h\nK" its held
-- jobs, "p\nK" pushed back until (unix ms); "p\n" the queue's own push-back.
-- A field at 0 or in the past is deleted. Every keyed due job is held in
-- K.lim_held ("K\n<waiting score, 16 digits>\n<id>", claim order per key),
-- never in the waiting zset. The invariants:
--   ready:  K is in K.lim_ready (score = its best held job's waiting score)
--           exactly when it has held jobs and room now;
--   wake:   a key with held jobs and no room is in K.lim_wake at the time a
--           rate window or a push-back gives it room again, or is at its
--           concurrency (a lease end gives it room: free_slot);
--   slots:  "u\nK" counts K's leases; only a fenced end of a lease frees one.
-- Each start of a key while a rate applies to it is recorded in
-- K.lim_starts ("K\n<ms, 13 digits>\n<lease id>"; the queue's own as K = ""),
-- trimmed to the window whenever that key starts again.
-- include: keys job_record flow_spec
-- composed per call: key_limits and unsettled are what this call read and changed

-- Key K's limit { c, r, p, override }: its override, else the each-key
-- default. Read once a call per key (load_key_limits reads many at once).
local key_limits = {}

local function parse_key_limit(raw)
  local c, r, p
  if raw then c, r, p = string.match(raw, '^(%d+) (%d+) (%d+)$') end
  if c then return { c = tonumber(c), r = tonumber(r), p = tonumber(p), override = raw } end
  local s = flow_spec() or NO_LIMITS
  return { c = s.kc, r = s.kr, p = s.kp }
end

local function key_limit(key)
  local l = key_limits[key]
  if not l then
    l = parse_key_limit(redis.call('HGET', K.limits, QUEUE .. '\n' .. key))
    key_limits[key] = l
  end
  return l
end

-- The limits of `keys` not read yet this call, in one HMGET (each
-- redis.call costs about a microsecond before the command does anything).
local function load_key_limits(keys)
  local missing, fields = {}, {}
  for _, key in ipairs(keys) do
    if not key_limits[key] then
      missing[#missing + 1] = key
      fields[#fields + 1] = QUEUE .. '\n' .. key
    end
  end
  if #missing == 0 then return end
  local raws = redis.call('HMGET', K.limits, unpack(fields))
  for i, key in ipairs(missing) do key_limits[key] = parse_key_limit(raws[i]) end
end

local function held_member(key, score, id)
  return key .. '\n' .. string.format('%016d', score) .. '\n' .. id
end

local function held_score(key, member)
  return tonumber(string.sub(member, #key + 2, #key + 17))
end

local function held_id(key, member)
  return string.sub(member, #key + 19)
end

-- The lex range of one key's members in lim_held or lim_starts.
local function key_from(key) return '[' .. key .. '\n' end
local function key_to(key) return '(' .. key .. '\11' end

local function start_member(key, now, lease)
  return key .. '\n' .. string.format('%013d', now) .. '\n' .. lease
end

-- The lex bound of key K's starts inside the window (now - per, now].
local function window_from(key, per, now)
  return '[' .. key .. '\n' .. string.format('%013d', now - per + 1)
end

local function starts_in_window(key, per, now)
  return redis.call('ZLEXCOUNT', K.lim_starts, window_from(key, per, now), key_to(key))
end

-- Room left in key K's rate window (math.huge without a rate), and when the
-- window has room again if it is full: when the start that must leave it
-- does (the (count - max + 1)-th oldest in the window, at its time + per).
local function rate_room(key, max, per, now)
  if max == 0 then return math.huge end
  local count = starts_in_window(key, per, now)
  if count < max then return max - count end
  local oldest = redis.call('ZRANGEBYLEX', K.lim_starts, window_from(key, per, now), key_to(key),
    'LIMIT', count - max, 1)[1]
  return 0, tonumber(string.sub(oldest, #key + 2, #key + 14)) + per
end

-- Key K's leased, held and pushed-back-until values.
local function key_counts(key)
  local v = redis.call('HMGET', K.lim, 'u\n' .. key, 'h\n' .. key, 'p\n' .. key)
  return tonumber(v[1] or '0'), tonumber(v[2] or '0'), tonumber(v[3] or '0')
end

-- The same for many keys in one HMGET: key -> { u = leased, h = held,
-- p = pushed back until }.
local function load_counts(keys)
  local fields = {}
  for _, key in ipairs(keys) do
    fields[#fields + 1] = 'u\n' .. key
    fields[#fields + 1] = 'h\n' .. key
    fields[#fields + 1] = 'p\n' .. key
  end
  local v = redis.call('HMGET', K.lim, unpack(fields))
  local counts = {}
  for i, key in ipairs(keys) do
    counts[key] = { u = tonumber(v[3 * i - 2] or '0'), h = tonumber(v[3 * i - 1] or '0'),
      p = tonumber(v[3 * i] or '0') }
  end
  return counts
end

-- How many of key K's jobs may start now (math.huge: no limit), and, when
-- none may and time will change that (rate window, push-back), when.
local function key_room(key, now, leased, pushed)
  if pushed > now then return 0, pushed end
  local l = key_limit(key)
  local room = math.huge
  if l.c > 0 then room = l.c - leased end
  if room <= 0 then return 0 end
  if l.r > 0 then
    local left, reopens = rate_room(key, l.r, l.p, now)
    if left <= 0 then return 0, reopens end
    if left < room then room = left end
  end
  return room
end

-- Put key K right in lim_ready and lim_wake after its counts or limits
-- changed. Returns true when it is ready (has held jobs and room).
local function refresh(key, now)
  local leased, held, pushed = key_counts(key)
  if pushed > 0 and pushed <= now then
    redis.call('HDEL', K.lim, 'p\n' .. key)
    pushed = 0
  end
  if held > 0 then
    local room, reopens = key_room(key, now, leased, pushed)
    if room > 0 then
      local best = redis.call('ZRANGEBYLEX', K.lim_held, key_from(key), key_to(key), 'LIMIT', 0, 1)[1]
      if best then
        redis.call('ZADD', K.lim_ready, held_score(key, best), key)
        redis.call('ZREM', K.lim_wake, key)
        return true
      end
      -- The count says held, the set has none: repair the count.
      redis.call('HDEL', K.lim, 'h\n' .. key)
    else
      redis.call('ZREM', K.lim_ready, key)
      if reopens then
        redis.call('ZADD', K.lim_wake, reopens, key)
      else
        redis.call('ZREM', K.lim_wake, key)
      end
      return false
    end
  end
  redis.call('ZREM', K.lim_ready, key)
  redis.call('ZREM', K.lim_wake, key)
  return false
end

-- A due job of key K enters the held set at its waiting score. Returns true
-- when K is ready (so the caller wakes idle workers).
local function hold(id, key, score, now)
  if redis.call('ZADD', K.lim_held, 0, held_member(key, score, id)) == 1 and
      redis.call('HINCRBY', K.lim, 'h\n' .. key, 1) == 1 then
    return refresh(key, now)
  end
  local best = redis.call('ZSCORE', K.lim_ready, key)
  if not best then return false end
  if score < tonumber(best) then redis.call('ZADD', K.lim_ready, score, key) end
  return true
end

-- Keys whose held set lost jobs (unhold_member); settle_keys refreshes each
-- once.
local unsettled, unsettled_list = {}, {}

-- A member of key K's held set leaves it (its job was cancelled or deleted,
-- or is gone).
local function unhold_member(key, member)
  if redis.call('ZREM', K.lim_held, member) == 0 then return end
  if redis.call('HINCRBY', K.lim, 'h\n' .. key, -1) <= 0 then
    redis.call('HDEL', K.lim, 'h\n' .. key)
  end
  if not unsettled[key] then
    unsettled[key] = true
    unsettled_list[#unsettled_list + 1] = key
  end
end

-- A held job leaves the held set (cancelled, deleted).
local function unhold(id, key, score)
  unhold_member(key, held_member(key, score, id))
end

-- Refresh the keys unhold changed, once each.
local function settle_keys(now)
  for _, key in ipairs(unsettled_list) do refresh(key, now) end
  unsettled, unsettled_list = {}, {}
end

-- `count` leases of key K ended (acked, failed, released, cancelled,
-- deleted). Returns true when K has room for a held job again.
local function free_slots(key, count, now)
  if redis.call('HINCRBY', K.lim, 'u\n' .. key, -count) <= 0 then
    redis.call('HDEL', K.lim, 'u\n' .. key)
  end
  return refresh(key, now)
end

-- The limit key of stored record `raw` ("" = none), decoded without the
-- rest: about 0.6 us where the whole decode (split_record) costs about 2.7
-- (a Lua loop on redis-server 7.0). A record of another header takes the
-- whole decode; one too short to hold the field (an older or a lean one:
-- lib/job_record.lua) has it at its default, "".
local function record_limit_key(raw)
  local len = stored_length(raw)
  if not len then return split_record(raw)[M.limit_key] end
  if len < M.limit_key then return '' end
  return (select(M.limit_key + 1, cmsgpack.unpack_limit(raw, M.limit_key, 3)))
end

-- The lease of job record `m` ended: free its key's slot (nothing for a job
-- without a limit key: no redis call). Returns true when a held job of its
-- key may start now.
local function free_slot(m, now)
  local key = m[M.limit_key]
  if key == '' then return false end
  return free_slots(key, 1, now)
end

-- The writes of one call's changes to many keys, one command each at flush
-- (instead of several per key): count fields deleted from K.lim, entries
-- added to and removed from K.lim_ready and K.lim_wake.
local function new_key_writes()
  return { del = {}, ready = {}, unready = {}, wake = {}, unwake = {} }
end

-- Key K's ready and wake entries when it has held jobs: ready at `best`
-- (its best held job's score) when it has room; else off the ready index and
-- in the wake index at `reopens` (none: only a lease end gives it room).
local function write_ready(w, key, best)
  w.ready[#w.ready + 1] = best
  w.ready[#w.ready + 1] = key
end

local function write_no_room(w, key, reopens)
  w.unready[#w.unready + 1] = key
  if reopens then
    w.wake[#w.wake + 1] = reopens
    w.wake[#w.wake + 1] = key
  else
    w.unwake[#w.unwake + 1] = key
  end
end

-- A key without held jobs is in neither index.
local function write_idle(w, key)
  w.unready[#w.unready + 1] = key
  w.unwake[#w.unwake + 1] = key
end

local function flush_key_writes(w)
  if #w.del > 0 then redis.call('HDEL', K.lim, unpack(w.del)) end
  if #w.ready > 0 then redis.call('ZADD', K.lim_ready, unpack(w.ready)) end
  if #w.unready > 0 then redis.call('ZREM', K.lim_ready, unpack(w.unready)) end
  if #w.wake > 0 then redis.call('ZADD', K.lim_wake, unpack(w.wake)) end
  if #w.unwake > 0 then redis.call('ZREM', K.lim_wake, unpack(w.unwake)) end
end

-- The score of key K's best held job (nil: it holds none).
local function best_held(key)
  local best = redis.call('ZRANGEBYLEX', K.lim_held, key_from(key), key_to(key), 'LIMIT', 0, 1)[1]
  return best and held_score(key, best)
end

-- Key K has held jobs (by its count) and its counts are `u` and `p`: put
-- its entries right in `w`, as refresh does. Returns true when it is ready.
local function settle_held_key(w, key, u, p, now)
  local room, reopens = key_room(key, now, u, p)
  if room <= 0 then
    write_no_room(w, key, reopens)
    return false
  end
  local best = best_held(key)
  if not best then
    -- The count says held, the set has none: repair the count.
    w.del[#w.del + 1] = 'h\n' .. key
    write_idle(w, key)
    return false
  end
  write_ready(w, key, best)
  w.unwake[#w.unwake + 1] = key
  return true
end

-- `freed[key]` leases of each of `keys` (distinct) ended at once (an ack of
-- many jobs). Each key's leased count drops (one HINCRBY: a field lookup
-- costs more than a call when the lim hash is a listpack, up to 512 fields
-- on a default server). Only a key that was at its concurrency and is below
-- it now can change its ready entry: a slot freed below the concurrency
-- adds room to a key that had room, and neither its rate window, its
-- push-back nor its held set changed. Those keys are settled as refresh
-- would (their counts in one HMGET). Returns true when one of them has a
-- held job with room now (so the caller wakes idle workers).
local function free_key_slots(keys, freed, now)
  load_key_limits(keys)
  local w = new_key_writes()
  local opened, leased_of = {}, {}
  for _, key in ipairs(keys) do
    local leased = redis.call('HINCRBY', K.lim, 'u\n' .. key, -freed[key])
    if leased <= 0 then
      w.del[#w.del + 1] = 'u\n' .. key
      leased = 0
    end
    local c = key_limits[key].c
    if c > 0 and leased < c and leased + freed[key] >= c then
      opened[#opened + 1] = key
      leased_of[key] = leased
    end
  end
  local wake = false
  if #opened > 0 then
    local counts = load_counts(opened)
    for _, key in ipairs(opened) do
      local c = counts[key]
      if c.p > 0 and c.p <= now then
        w.del[#w.del + 1] = 'p\n' .. key
        c.p = 0
      end
      if c.h > 0 and settle_held_key(w, key, leased_of[key], c.p, now) then wake = true end
    end
  end
  flush_key_writes(w)
  return wake
end

-- Key K (or the queue, key "") starts nothing until `until_ms` (a push-back;
-- the later of an existing one and this one wins).
local function push_back(key, until_ms)
  make_flow_aware()
  local field = 'p\n' .. key
  local current = tonumber(redis.call('HGET', K.lim, field) or '0')
  if until_ms > current then redis.call('HSET', K.lim, field, until_ms) end
end
