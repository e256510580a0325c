-- lib.lua: helpers shared by every redq script.
--
-- The Rust side (driver/src/scripts.rs) inserts this file after the first
-- line (the shebang) of each transition script, so each script stays one
-- self-contained EVALSHA body while the helpers exist once. Nothing here
-- runs on its own; it only defines locals.
--
-- Every queue-scoped script receives the same KEYS, named here once:
--   KEYS[1]  {ns}:jobs            hash   id -> job record: the msgpack meta array
--                                        (see M below) followed by the payload
--                                        (JSON text, opaque to Lua)
--   KEYS[2]  {ns}:q:Q:fifo        list   ids of fresh priority-0 jobs, in seq order
--   KEYS[3]  {ns}:q:Q:waiting     zset   id -> (255 - priority) * 2^44 + seq
--   KEYS[4]  {ns}:q:Q:scheduled   zset   id -> due time (unix ms, Redis clock)
--   KEYS[5]  {ns}:q:Q:leased      zset   id -> lease expiry (unix ms)
--   KEYS[6]  {ns}:q:Q:dead        zset   id -> died at (unix ms)
--   KEYS[7]  {ns}:q:Q:stats       hash   p<bucket>/f<bucket> -> processed/failed count
--   KEYS[8]  {ns}:dedup           hash   dedup key -> job id
--   KEYS[9]  {ns}:dedup:ttl       zset   dedup key -> expiry (TTL-mode keys only)
--   KEYS[10] {ns}:ord:active      hash   ordering key -> id of the job holding it
--   KEYS[11] {ns}:ord:blocked     zset   (lex) "key\nseq16\nid": jobs queued behind a holder
--   KEYS[12] {ns}:ord:ready       zset   (lex) "queue\nseq16\nid": released successors
--   KEYS[13] {ns}:ord:blocked:n   hash   queue -> number of its jobs in ord:blocked
--   KEYS[14] {ns}:events          stream capped feed of dead-letter events
--   KEYS[15] {ns}:seq             string job sequence (FIFO order within a priority)
--   KEYS[16] {ns}:lease:seq       string lease id generator (the fencing token)
--   KEYS[17] {ns}:queues          set    every queue name ever enqueued to
--   KEYS[18] {ns}:paused          set    paused queue names
--   KEYS[19] {ns}:q:Q:parked      string the one worker parked on Q for hand-offs
--                                        (see park.lua), expiring with its park
-- ARGV[1] is always the queue name Q and ARGV[2] the wake-up channel.
--
-- Waiting jobs live in two places, whose merge by score is the claim order:
-- a job enqueued due now, with priority 0 and no ordering key (the common
-- case) is appended to the fifo list, about 30 bytes a job where a zset entry
-- costs about 120; every other waiting job (a priority, an ordering key, or a
-- re-entry after a delay, retry, reclaim or requeue) is in the waiting zset.
-- Only enqueue.lua appends to fifo, and seq grows with each enqueue, so the
-- list stays sorted by seq and a fifo job's score is FIFO_BASE + seq.

local K = {
  jobs = KEYS[1], fifo = KEYS[2], waiting = KEYS[3], scheduled = KEYS[4],
  leased = KEYS[5], dead = KEYS[6], stats = KEYS[7], dedup = KEYS[8],
  dedup_ttl = KEYS[9], ord_active = KEYS[10], ord_blocked = KEYS[11],
  ord_ready = KEYS[12], ord_blocked_n = KEYS[13], events = KEYS[14],
  seq = KEYS[15], lease_seq = KEYS[16], queues = KEYS[17], paused = KEYS[18],
  parked = KEYS[19],
}
local QUEUE = ARGV[1]
local CHANNEL = ARGV[2]

-- Positions in the msgpack meta record. Always fully populated ("" and 0 for
-- "none") so cmsgpack encodes it as a fixed-length array. The lease comes
-- first and what an ack needs next: leasing rewrites only the first four
-- fields' bytes (lease_jobs) and an ack decodes only the first eight
-- (record_head), instead of the whole record each time.
local M = {
  lease_id = 1, lease_expiry = 2, worker_node = 3, worker_instance = 4,
  queue = 5, dedup_key = 6, dedup_ttl = 7, ordering_key = 8,
  priority = 9, seq = 10, enqueued_at = 11, not_before = 12, attempts = 13,
  max_attempts = 14, retry_window = 15, name = 16, error = 17,
  died_at = 18, resolved_lease = 19,
}
-- resolved_lease: the lease whose outcome was last recorded, so a resent
-- call is recognised: the lease id after a nack, minus the lease id after a
-- release, 0 after a reclaim or requeue.
local META_LEN = 19

-- Upper bounds shared with driver/src/limits.rs (validated there first).
local MAX_MS = 315360000000          -- ten years in milliseconds
local MAX_TIME_MS = 140737488355328  -- 2^47 ms: year 6429
local MAX_U32 = 4294967295
local MAX_ERROR_BYTES = 4096
local PRIORITY_SPAN = 17592186044416 -- 2^44: seq space per priority level
local FIFO_BASE = 255 * PRIORITY_SPAN -- waiting score of priority 0 at seq 0
local STATS_BUCKET_MS = 5000
local STATS_KEEP_BUCKETS = 200       -- 1000 s: the console charts 15 minutes
local EVENTS_MAXLEN = 10000

local function fail(msg)
  error({err = 'ERR redq: ' .. msg})
end

-- Whole numbers only: tonumber would also accept "nan", "inf", "0x10",
-- " 12" and "1e3". Sixteen digits keep every value exact in a Lua double.
local function uint(v, what, max)
  -- Most numeric arguments are "0" (option not set): skip the pattern match.
  if v == '0' then return 0 end
  if type(v) ~= 'string' or #v == 0 or #v > 16 or not string.match(v, '^%d+$') then
    fail(what .. ' must be a whole number, got ' .. string.format('%q', tostring(v)))
  end
  local n = tonumber(v)
  if n > max then
    fail(what .. ' must be at most ' .. string.format('%d', max) .. ', got ' .. v)
  end
  return n
end

-- Text that becomes part of a lex member or a hash field: bounded and free of
-- control characters (the lex members use "\n" as their separator).
local function text(v, what, max_len)
  -- Most text arguments are "" (option not set): skip the pattern search.
  if v == '' then return v end
  if type(v) ~= 'string' or #v > max_len or string.find(v, '%c') then
    fail(what .. ' must be at most ' .. max_len .. ' bytes without control characters')
  end
  return v
end

local function queue_name(v)
  if type(v) ~= 'string' or #v == 0 or #v > 128 or string.find(v, '[%c{}:]') then
    fail('queue name must be 1 to 128 bytes without control characters or { } :')
  end
  return v
end

-- A decimal u64 kept as text (worker node ids, park tokens): Lua doubles
-- cannot hold every u64, so it is compared as a string, never converted.
local function decimal_u64(v, what)
  if type(v) ~= 'string' or #v == 0 or #v > 20 or not string.match(v, '^%d+$') then
    fail(what .. ' must be a decimal u64')
  end
  return v
end

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function pad16(n)
  return string.format('%016d', n)
end

-- A job record is its packed meta followed by its payload: one hash entry a
-- job instead of two saves about 70 bytes of Redis memory per job. Split it
-- into the meta (a table) and the payload (a string).
local function split_record(raw)
  local used, m = cmsgpack.unpack_one(raw)
  if used < 0 then return m, '' end
  return m, string.sub(raw, used + 1)
end

-- The bytes every record starts with: a msgpack array of 19 (array16
-- header), then, while the job is not leased, its cleared lease 0, 0, '', 0.
local RECORD_HEADER = '\220\0\19'
local CLEARED_LEASE = '\0\0\160\0'

-- The lease, queue and key fields of a record (M positions 1 to 8), decoded
-- without the rest: what an ack needs.
local function record_head(raw)
  if string.sub(raw, 1, 3) ~= RECORD_HEADER then return (split_record(raw)) end
  local _, a, b, c, d, e, f, g, h = cmsgpack.unpack_limit(raw, 8, 3)
  return { a, b, c, d, e, f, g, h }
end

-- Payloads of the records load_meta read, for store_meta to write back: a
-- script rewrites a record's meta, never its payload.
local payload_of = {}

local function load_meta(id)
  local raw = redis.call('HGET', K.jobs, id)
  if not raw then return nil end
  local m, payload = split_record(raw)
  payload_of[id] = payload
  return m
end

-- Write a record's meta; `payload` is needed only when the record was not
-- read by load_meta in this script (a new job).
local function store_meta(id, m, payload)
  payload = payload or payload_of[id]
  if not payload then error('redq: store_meta of job ' .. id .. ' without its payload') end
  redis.call('HSET', K.jobs, id, cmsgpack.pack(m) .. payload)
end

local function waiting_score(m)
  return (255 - m[M.priority]) * PRIORITY_SPAN + m[M.seq]
end

local function clear_lease(m)
  m[M.lease_id] = 0
  m[M.lease_expiry] = 0
  m[M.worker_node] = ''
  m[M.worker_instance] = 0
end

-- Count a processed ('p') or failed ('f') job in the current time bucket.
-- Old buckets are dropped when a new bucket starts, so the hash stays bounded
-- (at most 2 * STATS_KEEP_BUCKETS fields), and the key expires when idle.
local function bump_stats(kind, now, count)
  local bucket = math.floor(now / STATS_BUCKET_MS)
  count = count or 1
  if redis.call('HINCRBY', K.stats, kind .. bucket, count) == count then
    redis.call('PEXPIRE', K.stats, STATS_BUCKET_MS * STATS_KEEP_BUCKETS)
    local oldest = bucket - STATS_KEEP_BUCKETS
    for _, field in ipairs(redis.call('HKEYS', K.stats)) do
      local b = tonumber(string.sub(field, 2))
      if b and b < oldest then redis.call('HDEL', K.stats, field) end
    end
  end
end

-- Make a job due at `due`: waiting when due now, scheduled otherwise.
local function place(id, m, due, now)
  if due > now then
    redis.call('ZADD', K.scheduled, due, id)
    return false
  end
  redis.call('ZADD', K.waiting, waiting_score(m), id)
  return true
end

-- Enter a job into its queue, respecting its ordering key: while another job
-- holds the key, this one waits in ord:blocked (FIFO by seq). Returns true
-- when the job is due now (so the caller wakes idle workers).
local function admit(id, m, due, now)
  local key = m[M.ordering_key]
  if key ~= '' then
    local holder = redis.call('HGET', K.ord_active, key)
    if holder and holder ~= id and redis.call('HEXISTS', K.jobs, holder) == 1 then
      redis.call('ZADD', K.ord_blocked, 0, key .. '\n' .. pad16(m[M.seq]) .. '\n' .. id)
      redis.call('HINCRBY', K.ord_blocked_n, m[M.queue], 1)
      return false
    end
    redis.call('HSET', K.ord_active, key, id)
  end
  return place(id, m, due, now)
end

-- A job left for good (completed or dead): free its dedup key (unless the key
-- lives on for a TTL) and hand its ordering key to the next job queued behind
-- it, in whatever queue that job is. The successor goes to ord:ready, which
-- its own queue's claim drains, so this script only touches declared keys.
local function release_keys(id, m)
  local dk = m[M.dedup_key]
  if dk ~= '' and m[M.dedup_ttl] == 0 and redis.call('HGET', K.dedup, dk) == id then
    redis.call('HDEL', K.dedup, dk)
  end
  local key = m[M.ordering_key]
  if key == '' or redis.call('HGET', K.ord_active, key) ~= id then return end
  local next_members = redis.call('ZRANGEBYLEX', K.ord_blocked,
    '[' .. key .. '\n', '(' .. key .. '\11', 'LIMIT', 0, 1)
  local member = next_members[1]
  if not member then
    redis.call('HDEL', K.ord_active, key)
    return
  end
  redis.call('ZREM', K.ord_blocked, member)
  local next_id = string.sub(member, #key + 19)
  local nm = load_meta(next_id)
  if not nm then
    redis.call('HDEL', K.ord_active, key)
    return
  end
  redis.call('HSET', K.ord_active, key, next_id)
  local next_queue = nm[M.queue]
  if redis.call('HINCRBY', K.ord_blocked_n, next_queue, -1) <= 0 then
    redis.call('HDEL', K.ord_blocked_n, next_queue)
  end
  redis.call('ZADD', K.ord_ready, 0, next_queue .. '\n' .. pad16(nm[M.seq]) .. '\n' .. next_id)
  redis.call('PUBLISH', CHANNEL, next_queue)
end

-- Record a failed attempt of a leased job: back to the queue after `delay`,
-- or to the dead-letter set when forced, when attempts are spent, or when the
-- retry window has passed. `resolved` is the lease this failure resolves when
-- a worker reported it (so a resent nack is recognised), 0 for a reclaim.
-- Returns dead (bool) and the due time when requeued.
local function fail_attempt(id, m, now, err, force_dead, delay, resolved)
  m[M.attempts] = m[M.attempts] + 1
  m[M.error] = string.sub(err, 1, MAX_ERROR_BYTES)
  m[M.resolved_lease] = resolved
  clear_lease(m)
  redis.call('ZREM', K.leased, id)
  bump_stats('f', now)
  local spent = m[M.max_attempts] > 0 and m[M.attempts] >= m[M.max_attempts]
  local expired = m[M.retry_window] > 0 and now >= m[M.enqueued_at] + m[M.retry_window]
  if force_dead or spent or expired then
    m[M.died_at] = now
    store_meta(id, m)
    redis.call('ZADD', K.dead, now, id)
    release_keys(id, m)
    redis.call('XADD', K.events, 'MAXLEN', '~', EVENTS_MAXLEN, '*',
      'kind', 'dead', 'queue', m[M.queue], 'id', id, 'name', m[M.name],
      'error', m[M.error], 'attempts', m[M.attempts], 'at', now)
    return true, 0
  end
  store_meta(id, m)
  local due = now + delay
  if place(id, m, due, now) then redis.call('PUBLISH', CHANNEL, QUEUE) end
  return false, due
end

-- Return up to `limit` lapsed leases of this queue to waiting (or the
-- dead-letter set), each counting one failed attempt.
local function reclaim_lapsed(now, limit)
  local lapsed = redis.call('ZRANGEBYSCORE', K.leased, '-inf', now, 'LIMIT', 0, limit)
  local requeued, dead = 0, 0
  for _, id in ipairs(lapsed) do
    local m = load_meta(id)
    if m then
      local why = 'lease expired (held by node ' .. m[M.worker_node] ..
        ' instance ' .. m[M.worker_instance] .. ')'
      if fail_attempt(id, m, now, why, false, 0, 0) then dead = dead + 1 else requeued = requeued + 1 end
    else
      redis.call('ZREM', K.leased, id)
    end
  end
  return requeued, dead
end

-- How many jobs wait in the queue's two waiting structures.
local function waiting_count()
  return redis.call('ZCARD', K.waiting) + redis.call('LLEN', K.fifo)
end

-- Take up to `limit` waiting jobs off the queue in claim order (priority,
-- then seq): the merge of the waiting zset and the fifo list. Returns ids.
local function pop_waiting(limit)
  if redis.call('ZCARD', K.waiting) == 0 then
    return redis.call('LPOP', K.fifo, limit) or {}
  end
  local fifo = redis.call('LRANGE', K.fifo, 0, limit - 1)
  if #fifo == 0 then
    local popped = redis.call('ZPOPMIN', K.waiting, limit)
    local ids = {}
    for i = 1, #popped / 2 do ids[i] = popped[i * 2 - 1] end
    return ids
  end
  -- Both hold jobs: merge by score. A fifo job whose record is missing
  -- scores lowest, so it is popped and dropped like a dangling zset member.
  local zset = redis.call('ZRANGE', K.waiting, 0, limit - 1, 'WITHSCORES')
  local records = redis.call('HMGET', K.jobs, unpack(fifo))
  local ids, z, f = {}, 1, 1
  while #ids < limit and (zset[z] or fifo[f]) do
    local take_fifo = fifo[f] ~= nil
    if take_fifo and zset[z] then
      local raw = records[f]
      local fifo_score = raw and FIFO_BASE + split_record(raw)[M.seq] or -1
      take_fifo = fifo_score < tonumber(zset[z + 1])
    end
    if take_fifo then
      ids[#ids + 1] = fifo[f]
      f = f + 1
    else
      ids[#ids + 1] = zset[z]
      z = z + 2
    end
  end
  if z > 1 then redis.call('ZREMRANGEBYRANK', K.waiting, 0, (z - 1) / 2 - 1) end
  if f > 1 then redis.call('LTRIM', K.fifo, f - 1, -1) end
  return ids
end

-- Milliseconds until a job of this queue is due for claiming: 0 when one is
-- due now (waiting, or a released ordering successor), else the soonest of
-- the next scheduled job and the next lease expiry (due for reclaim), -1
-- when nothing is pending or the queue is paused.
local function due_in_ms()
  if redis.call('SISMEMBER', K.paused, QUEUE) == 1 then return -1 end
  if waiting_count() > 0 then return 0 end
  if redis.call('ZLEXCOUNT', K.ord_ready, '[' .. QUEUE .. '\n', '(' .. QUEUE .. '\11') > 0 then
    return 0
  end
  local at = now_ms()
  local soonest = -1
  for _, key in ipairs({ K.scheduled, K.leased }) do
    local head = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    if head[2] then
      local wait = math.max(0, tonumber(head[2]) - at)
      if soonest < 0 or wait < soonest then soonest = wait end
    end
  end
  return soonest
end

-- Lease the popped waiting jobs `ids` (in order) to one holder: the claim
-- transition, shared by claim.lua and hand-offs. One HMGET, HSET and ZADD for
-- the batch: each redis.call costs about a microsecond before the command
-- does anything. Returns a flat list: id, record (packed meta, then the
-- payload) per job.
local function lease_jobs(ids, lease_ms, node, instance, now)
  local count = #ids
  local records = redis.call('HMGET', K.jobs, unpack(ids))
  local next_lease = redis.call('INCRBY', K.lease_seq, count) - count + 1
  local expiry = now + lease_ms
  local meta_pairs, lease_pairs, out = {}, {}, {}
  for i = 1, count do
    local raw = records[i]
    if raw then
      local id = ids[i]
      local record
      if string.sub(raw, 1, 7) == RECORD_HEADER .. CLEARED_LEASE then
        -- The usual case: splice the lease into the bytes (the four fields
        -- are first), about half the cost of unpacking and repacking.
        record = RECORD_HEADER .. cmsgpack.pack(next_lease, expiry, node, instance) .. string.sub(raw, 8)
      else
        local m, payload = split_record(raw)
        m[M.lease_id] = next_lease
        m[M.lease_expiry] = expiry
        m[M.worker_node] = node
        m[M.worker_instance] = instance
        record = cmsgpack.pack(m) .. payload
      end
      next_lease = next_lease + 1
      meta_pairs[#meta_pairs + 1] = id
      meta_pairs[#meta_pairs + 1] = record
      lease_pairs[#lease_pairs + 1] = expiry
      lease_pairs[#lease_pairs + 1] = id
      out[#out + 1] = id
      out[#out + 1] = record
    end
  end
  if #meta_pairs > 0 then
    redis.call('HSET', K.jobs, unpack(meta_pairs))
    redis.call('ZADD', K.leased, unpack(lease_pairs))
  end
  return out
end

-- The worker parked on this queue (park.lua), or nil: its token, identity,
-- lease, how many jobs it can take and how many it was handed so far. The
-- record is one string, "token node instance lease_ms capacity handed".
local function parked_read()
  local raw = redis.call('GET', K.parked)
  if not raw then return nil end
  local token, node, instance, lease_ms, capacity, handed =
    string.match(raw, '^(%d+) (%d+) (%d+) (%d+) (%d+) (%d+)$')
  if not token then return nil end
  return {
    token = token, node = node, instance = tonumber(instance),
    lease_ms = tonumber(lease_ms), capacity = tonumber(capacity), handed = tonumber(handed),
  }
end

local function parked_format(p)
  return table.concat({ p.token, p.node, string.format('%d', p.instance),
    string.format('%d', p.lease_ms), string.format('%d', p.capacity),
    string.format('%d', p.handed) }, ' ')
end

-- Each parked worker listens for hand-offs on its own channel.
local function handoff_channel(token)
  return CHANNEL .. ':' .. token
end

-- Check a worker's lease token against the job's current lease. lease 0 means
-- "whatever lease is current" (the seed trait's unfenced calls).
local function lease_matches(m, lease)
  return m[M.lease_id] ~= 0 and (lease == 0 or m[M.lease_id] == lease)
end
