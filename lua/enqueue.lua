#!lua
-- enqueue.lua: add a batch of jobs to one queue (seed op Enqueue).
--
-- No allow-oom flag: under maxmemory with noeviction Redis refuses the whole
-- script before it runs, so an out-of-memory enqueue writes nothing.
--
-- include: check clock keys job_record waiting ordering handoff flow events
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  paused; with keyed jobs or a parked worker also limits, lim_starts
--   writes jobs, fifo, waiting, scheduled, dedup, dedup_ttl, ord_active, ord_blocked,
--          ord_blocked_n, seq, queues; for a hand-off also leased, lease_seq, parked;
--          with keyed jobs also limits, lim, lim_held, lim_ready, lim_wake, events
-- ARGV[1] queue name       ARGV[2] wake-up channel
-- ARGV[3] payload limit (bytes)
-- ARGV[4] n, the number of jobs (1..1000)
-- ARGV[5] gate id, "" for none: every job this call creates joins that gate
--         as a member (lib/gate.lua), the gate created open if missing
-- ARGV[6] gate kind, "batch" or "tree" ("" when there is no gate)
-- then 16 entries per job:
--   id                 client-generated ULID (a resent script finds it and creates nothing)
--   payload            JSON text
--   priority           0..255, higher is claimed first
--   delay_ms           due this long after now (Redis clock)
--   not_before_ms      or due at this unix time in ms (0 = not set; the later of the two wins)
--   dedup_key          "" for none
--   dedup_ttl_ms       0: the key is held while the job lives; > 0: held this long from now
--   ordering_key       "" for none
--   max_attempts       0 = unlimited
--   retry_window_ms    0 = none; after enqueued_at + window a failure dead-letters
--   name               job type name, "" for none
--   attempts           attempts already recorded (a job moved from elsewhere): below
--                      max_attempts unless that is 0 (unlimited); usually 0
--   backoff_base_ms    a reclaim's delay for the first lapsed lease, doubling per
--                      attempt (lib/retry.lua); 0 = a reclaimed job is due at once
--   backoff_cap_ms     the longest such delay: at least backoff_base_ms
--   limit_key          "" for none: the job's limit key within this queue (lib/flow.lua)
--   trace              "" for none: the producer's W3C traceparent (55 bytes in version
--                      00), stored for the worker's span (driver/src/trace)
-- Hand-off: when a worker is parked on the queue (park.lua), the head of the
-- queue is leased to it here, as its claim would (lua/lib/handoff.lua).
-- Limit keys (lib/flow.lua): a job with one makes the queue flow-aware
-- (its limits field is created, all zeros, if missing); due, it is held by
-- its key (after its ordering key admits it, when it has both), delayed it
-- is scheduled as any job. A flow-aware queue hands nothing off. Jobs
-- without a limit key cost nothing more.
-- Reply: flat array, two entries per job in order: code, id.
-- code 1 created: the job was created under that id
-- code 0 duplicate: a live job has the dedup key; the id is the existing job's
-- code 2 created_earlier: an earlier send of this same script created the job
-- Errors (nothing written): "ERR redq: ..." naming the bad argument.
local FIELDS = 16
local limit = uint(ARGV[3], 'payload limit', 1073741824)
local n = uint(ARGV[4], 'job count', 1000)
local HEAD = 6
if #ARGV ~= HEAD + n * FIELDS then fail('expected ' .. (HEAD + n * FIELDS) .. ' arguments, got ' .. #ARGV) end
queue_name(QUEUE)
local gate, gate_kind = text(ARGV[5], 'gate id', 64), ARGV[6]
if gate == '' and gate_kind ~= '' then fail('gate kind must be "" without a gate id, got ' .. string.format('%q', gate_kind)) end
if gate ~= '' and gate_kind ~= 'batch' and gate_kind ~= 'tree' then
  fail('gate kind must be batch or tree, got ' .. string.format('%q', gate_kind))
end
if gate ~= '' then fail('joining a gate is not supported yet') end
-- An empty batch creates nothing (and HMGET needs at least one field).
if n == 0 then return {} end

-- Parsed arguments, one array per field (no table per job).
local ids, payloads, priorities, delays, not_befores = {}, {}, {}, {}, {}
local dedup_keys, dedup_ttls, ordering_keys, max_attempts, retry_windows, names = {}, {}, {}, {}, {}, {}
local attempts, backoff_bases, backoff_caps, limit_keys, traces = {}, {}, {}, {}, {}
for i = 1, n do
  local b = HEAD + (i - 1) * FIELDS
  local id = text(ARGV[b + 1], 'job id', 64)
  local payload = ARGV[b + 2]
  if #id == 0 then fail('job id must not be empty') end
  if #payload == 0 or #payload > limit then
    fail('payload of job ' .. id .. ' is ' .. #payload .. ' bytes; accepted: 1 to ' .. limit)
  end
  ids[i], payloads[i] = id, payload
  priorities[i] = uint(ARGV[b + 3], 'priority', 255)
  delays[i] = uint(ARGV[b + 4], 'delay_ms', MAX_MS)
  not_befores[i] = uint(ARGV[b + 5], 'not_before_ms', MAX_TIME_MS)
  dedup_keys[i] = text(ARGV[b + 6], 'dedup key', 512)
  dedup_ttls[i] = uint(ARGV[b + 7], 'dedup_ttl_ms', MAX_MS)
  ordering_keys[i] = text(ARGV[b + 8], 'ordering key', 512)
  max_attempts[i] = uint(ARGV[b + 9], 'max_attempts', MAX_U32)
  retry_windows[i] = uint(ARGV[b + 10], 'retry_window_ms', MAX_MS)
  names[i] = text(ARGV[b + 11], 'job name', 256)
  attempts[i] = uint(ARGV[b + 12], 'attempts', MAX_U32)
  if max_attempts[i] > 0 and attempts[i] >= max_attempts[i] then
    fail('attempts of job ' .. id .. ' is ' .. attempts[i] .. '; accepted: below max_attempts (' .. max_attempts[i] .. ')')
  end
  backoff_bases[i] = uint(ARGV[b + 13], 'backoff_base_ms', MAX_MS)
  backoff_caps[i] = uint(ARGV[b + 14], 'backoff_cap_ms', MAX_MS)
  if backoff_caps[i] < backoff_bases[i] then
    fail('backoff_cap_ms of job ' .. id .. ' is ' .. backoff_caps[i] ..
      '; accepted: at least backoff_base_ms (' .. backoff_bases[i] .. ')')
  end
  limit_keys[i] = text(ARGV[b + 15], 'limit key', 512)
  traces[i] = text(ARGV[b + 16], 'trace', 55)
end

-- Validation is complete: from here on the script writes.
local now = now_ms()
local first_seq = redis.call('INCRBY', K.seq, n) - n + 1
redis.call('SADD', K.queues, QUEUE)

-- Forget a few expired TTL-mode dedup keys per call so the set stays bounded.
for _, dk in ipairs(redis.call('ZRANGEBYSCORE', K.dedup_ttl, '-inf', now, 'LIMIT', 0, 20)) do
  redis.call('HDEL', K.dedup, dk)
  redis.call('ZREM', K.dedup_ttl, dk)
end

-- Jobs created earlier in this same batch count as live (their records are
-- written in bulk below, after this loop).
local created = {}

local function live_duplicate(dk)
  local existing = redis.call('HGET', K.dedup, dk)
  if not existing then return nil end
  local expiry = redis.call('ZSCORE', K.dedup_ttl, dk)
  if expiry then
    if tonumber(expiry) > now then return existing end
  elseif created[existing] or redis.call('HEXISTS', K.jobs, existing) == 1 then
    return existing
  end
  redis.call('HDEL', K.dedup, dk)
  redis.call('ZREM', K.dedup_ttl, dk)
  return nil
end

-- One HMGET finds every job a resent script already created.
local already = redis.call('HMGET', K.jobs, unpack(ids))

local reply = {}
-- Counted, not measured with #, in the loop over up to 1000 jobs.
local record_pairs, pairs_len = {}, 0
local fifo, waiting, scheduled, ordered, keyed = {}, {}, {}, {}, {}
local wake, any_keyed = false, false
for i = 1, n do
  local code, id = 1, ids[i]
  local dk = dedup_keys[i]
  local existing = dk ~= '' and live_duplicate(dk)
  if already[i] or created[id] then
    code = 2
  elseif existing then
    code, id = 0, existing
  else
    local due = math.max(now + delays[i], not_befores[i])
    local m = new_record()
    m[M.queue] = QUEUE
    m[M.dedup_key], m[M.dedup_ttl] = dk, dedup_ttls[i]
    m[M.ordering_key] = ordering_keys[i]
    m[M.priority], m[M.seq] = priorities[i], first_seq + i - 1
    m[M.enqueued_at], m[M.not_before] = now, due
    m[M.attempts], m[M.max_attempts] = attempts[i], max_attempts[i]
    m[M.retry_window], m[M.name] = retry_windows[i], names[i]
    m[M.backoff_base], m[M.backoff_cap] = backoff_bases[i], backoff_caps[i]
    m[M.limit_key], m[M.trace] = limit_keys[i], traces[i]
    created[id] = true
    record_pairs[pairs_len + 1], record_pairs[pairs_len + 2] = id, encode_record(m, payloads[i])
    pairs_len = pairs_len + 2
    if dk ~= '' then
      redis.call('HSET', K.dedup, dk, id)
      if dedup_ttls[i] > 0 then redis.call('ZADD', K.dedup_ttl, now + dedup_ttls[i], dk) end
    end
    if limit_keys[i] ~= '' then any_keyed = true end
    if ordering_keys[i] ~= '' then
      ordered[#ordered + 1] = { id = id, m = m, due = due }
    elseif due > now then
      scheduled[#scheduled + 1] = due
      scheduled[#scheduled + 1] = id
    elseif limit_keys[i] ~= '' then
      keyed[#keyed + 1] = { id = id, m = m }
    elseif priorities[i] == 0 then
      fifo[#fifo + 1] = id
      wake = true
    else
      waiting[#waiting + 1] = waiting_score(m)
      waiting[#waiting + 1] = id
      wake = true
    end
  end
  reply[2 * i - 1], reply[2 * i] = code, id
end

-- Records first (admit() checks that an ordering key's holder exists), in
-- bulk; then each job enters its queue: jobs with an ordering key one by one
-- through admit(), the rest with one RPUSH or ZADD per structure.
local CHUNK = 500
for from = 1, #record_pairs, 2 * CHUNK do
  redis.call('HSET', K.jobs, unpack(record_pairs, from, math.min(from + 2 * CHUNK - 1, #record_pairs)))
end
for from = 1, #fifo, 2 * CHUNK do
  redis.call('RPUSH', K.fifo, unpack(fifo, from, math.min(from + 2 * CHUNK - 1, #fifo)))
end
if any_keyed then make_flow_aware() end
for _, o in ipairs(ordered) do
  if admit(o.id, o.m, o.due, now) then wake = true end
end
for _, j in ipairs(keyed) do
  if hold(j.id, j.m[M.limit_key], waiting_score(j.m), now) then wake = true end
end
for from = 1, #waiting, 2 * CHUNK do
  redis.call('ZADD', K.waiting, unpack(waiting, from, math.min(from + 2 * CHUNK - 1, #waiting)))
end
for from = 1, #scheduled, 2 * CHUNK do
  redis.call('ZADD', K.scheduled, unpack(scheduled, from, math.min(from + 2 * CHUNK - 1, #scheduled)))
end

-- A worker parked on this queue takes what it has room for; the rest wakes
-- the others.
if wake then wake = hand_off(now) end
if wake then redis.call('PUBLISH', CHANNEL, QUEUE) end
-- One event per call, however many jobs it created (none for a resend).
if pairs_len == 2 then emit(K.events, 'enqueued', QUEUE, now, 'count', 1, 'id', record_pairs[1])
elseif pairs_len > 0 then emit(K.events, 'enqueued', QUEUE, now, 'count', pairs_len / 2) end
return reply
