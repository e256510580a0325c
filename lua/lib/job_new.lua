-- lib/job_new.lua: creating a job from the 16 ARGV fields an enqueue takes
-- per job (enqueue.lua's header lists them), shared by enqueue.lua and by
-- gate_seal.lua (which creates its waiters): one parser, one record builder,
-- one dedup rule.
-- include: check keys job_record

local JOB_FIELDS = 16

-- Parsed jobs: one array per field, indexed by the job's place in the call
-- (no table per job: enqueue takes up to 1000 a call); dedup_keyed counts
-- the jobs with a dedup key, ttl_keyed those whose key has a TTL.
local function new_parsed()
  return { ids = {}, payloads = {}, priorities = {}, delays = {}, not_befores = {},
    dedup_keys = {}, dedup_ttls = {}, ordering_keys = {}, max_attempts = {},
    retry_windows = {}, names = {}, attempts = {}, backoff_bases = {}, backoff_caps = {},
    limit_keys = {}, traces = {}, dedup_keyed = 0, ttl_keyed = 0 }
end

-- Validate the job whose fields are ARGV[b + 1] .. ARGV[b + 16] into `p` at
-- `i`; `limit` is the payload limit in bytes. Refuses (lib/check.lua) a bad
-- field by name.
local function parse_job(p, i, b, limit)
  local id = text(ARGV[b + 1], 'job id', 64)
  local payload = ARGV[b + 2]
  if #id == 0 then fail('job id must not be empty') end
  if #payload == 0 or #payload > limit then
    fail('payload of job ' .. id .. ' is ' .. #payload .. ' bytes; accepted: 1 to ' .. limit)
  end
  p.ids[i], p.payloads[i] = id, payload
  p.priorities[i] = uint(ARGV[b + 3], 'priority', 255)
  p.delays[i] = uint(ARGV[b + 4], 'delay_ms', MAX_MS)
  p.not_befores[i] = uint(ARGV[b + 5], 'not_before_ms', MAX_TIME_MS)
  p.dedup_keys[i] = text(ARGV[b + 6], 'dedup key', 512)
  p.dedup_ttls[i] = uint(ARGV[b + 7], 'dedup_ttl_ms', MAX_MS)
  if p.dedup_keys[i] ~= '' then
    p.dedup_keyed = p.dedup_keyed + 1
    if p.dedup_ttls[i] > 0 then p.ttl_keyed = p.ttl_keyed + 1 end
  end
  p.ordering_keys[i] = text(ARGV[b + 8], 'ordering key', 512)
  local max_attempts = uint(ARGV[b + 9], 'max_attempts', MAX_U32)
  p.max_attempts[i] = max_attempts
  p.retry_windows[i] = uint(ARGV[b + 10], 'retry_window_ms', MAX_MS)
  p.names[i] = text(ARGV[b + 11], 'job name', 256)
  local attempts = uint(ARGV[b + 12], 'attempts', MAX_U32)
  if max_attempts > 0 and attempts >= max_attempts then
    fail('attempts of job ' .. id .. ' is ' .. attempts .. '; accepted: below max_attempts (' .. max_attempts .. ')')
  end
  p.attempts[i] = attempts
  local base = uint(ARGV[b + 13], 'backoff_base_ms', MAX_MS)
  local cap = uint(ARGV[b + 14], 'backoff_cap_ms', MAX_MS)
  if cap < base then
    fail('backoff_cap_ms of job ' .. id .. ' is ' .. cap ..
      '; accepted: at least backoff_base_ms (' .. base .. ')')
  end
  p.backoff_bases[i], p.backoff_caps[i] = base, cap
  p.limit_keys[i] = text(ARGV[b + 15], 'limit key', 512)
  p.traces[i] = text(ARGV[b + 16], 'trace', 55)
end

-- When parsed job `i` is due, created at `now`.
local function parsed_due(p, i, now)
  return math.max(now + p.delays[i], p.not_befores[i])
end

-- The record of parsed job `i` in `queue`, with sequence number `seq`,
-- created at `now`: in `m` when given (a record from new_record() that an
-- earlier call filled: every field a job sets is set again; enqueue reuses
-- one for the jobs whose record it only packs), else in a new one.
local function parsed_record(p, i, queue, seq, now, m)
  m = m or new_record()
  m[M.queue] = queue
  m[M.dedup_key], m[M.dedup_ttl] = p.dedup_keys[i], p.dedup_ttls[i]
  m[M.ordering_key] = p.ordering_keys[i]
  m[M.priority], m[M.seq] = p.priorities[i], seq
  m[M.enqueued_at], m[M.not_before] = now, parsed_due(p, i, now)
  m[M.attempts], m[M.max_attempts] = p.attempts[i], p.max_attempts[i]
  m[M.retry_window], m[M.name] = p.retry_windows[i], p.names[i]
  m[M.backoff_base], m[M.backoff_cap] = p.backoff_bases[i], p.backoff_caps[i]
  m[M.limit_key], m[M.trace] = p.limit_keys[i], p.traces[i]
  return m
end

-- The live job holding dedup key `dk`, if any; a stale entry (its job gone,
-- or its TTL passed) is forgotten. `created` holds ids this call created
-- whose records are not written yet.
local function live_duplicate(dk, now, created)
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

-- Job `id` (record `m`) takes its dedup key, if it has one.
local function take_dedup(id, m, now)
  local dk = m[M.dedup_key]
  if dk == '' then return end
  redis.call('HSET', K.dedup, dk, id)
  if m[M.dedup_ttl] > 0 then redis.call('ZADD', K.dedup_ttl, now + m[M.dedup_ttl], dk) end
end
