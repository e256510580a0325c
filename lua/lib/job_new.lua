-- lib/job_new.lua: creating a job from its enqueue entries (id, payload,
-- then the options that differ from their defaults: enqueue.lua's header
-- lays them out), shared by enqueue.lua and by gate_seal.lua (which creates
-- its waiters): one parser, one record builder, one dedup rule.
-- include: check keys job_record

-- The options a job may send, by their code on the wire (enqueue.lua's
-- header, `option N`; driver/src/enqueue_args.rs pins its codes to that
-- header): the code as a number (sent in ascending order), the name a
-- refusal uses, where the value goes (a record field's M position, or the
-- parsed array of a part of the due time), the check and its bound. A value
-- equal to its default sets nothing. Built by the call's first job that
-- sends an option: most calls send none.
local JOB_OPTION_COUNT = 14
local job_options
local function option_specs()
  job_options = job_options or {
    ['1'] = { 1, 'priority', M.priority, uint, 255 },
    ['2'] = { 2, 'delay_ms', 'delays', uint, MAX_MS },
    ['3'] = { 3, 'not_before_ms', 'not_befores', uint, MAX_TIME_MS },
    ['4'] = { 4, 'dedup key', M.dedup_key, text, 512 },
    ['5'] = { 5, 'dedup_ttl_ms', M.dedup_ttl, uint, MAX_MS },
    ['6'] = { 6, 'ordering key', M.ordering_key, text, 512 },
    ['7'] = { 7, 'max_attempts', M.max_attempts, uint, MAX_U32 },
    ['8'] = { 8, 'retry_window_ms', M.retry_window, uint, MAX_MS },
    ['9'] = { 9, 'job name', M.name, text, 256 },
    ['10'] = { 10, 'attempts', M.attempts, uint, MAX_U32 },
    ['11'] = { 11, 'backoff_base_ms', M.backoff_base, uint, MAX_MS },
    ['12'] = { 12, 'backoff_cap_ms', M.backoff_cap, uint, MAX_MS },
    ['13'] = { 13, 'limit key', M.limit_key, text, 512 },
    ['14'] = { 14, 'trace', M.trace, text, 55 },
  }
  return job_options
end

-- Parsed jobs: one array per part, indexed by the job's place in the call
-- (enqueue takes up to 1000 a call). options[i] is nil for a job with every
-- option at its default, else its record fields that differ (M position ->
-- value); delays and not_befores are set only when sent. dedup_keyed counts
-- the jobs with a dedup key, ttl_keyed those whose key has a TTL.
local function new_parsed()
  return { ids = {}, payloads = {}, options = {}, delays = {}, not_befores = {},
    dedup_keyed = 0, ttl_keyed = 0 }
end

-- Validate the job whose entries start at ARGV[b + 1] (id, payload, option
-- count, then the options' (code, value) pairs) into `p` at `i`; `limit` is
-- the payload limit in bytes, `argc` the arguments there are. Returns the
-- position of the job's last entry. Refuses (lib/check.lua) a bad field by
-- name, an unknown, repeated or misordered option code, and entries past
-- `argc`.
local function parse_job(p, i, b, limit, argc)
  if b + 3 > argc then fail('job ' .. i .. ' needs 3 entries at least (id, payload, option count); the arguments end') end
  local id = text(ARGV[b + 1], 'job id', 64)
  local payload = ARGV[b + 2]
  if #id == 0 then fail('job id must not be empty') end
  if #payload == 0 or #payload > limit then
    fail('payload of job ' .. id .. ' is ' .. #payload .. ' bytes; accepted: 1 to ' .. limit)
  end
  p.ids[i], p.payloads[i] = id, payload
  local count = ARGV[b + 3]
  -- Most jobs set no option.
  if count == '0' then return b + 3 end
  count = uint(count, 'option count of job ' .. id, JOB_OPTION_COUNT)
  local last = b + 3 + 2 * count
  if last > argc then
    fail('job ' .. id .. ' has ' .. count .. ' options, but the arguments end after ' .. (argc - b - 3) .. ' of their entries')
  end
  local specs = option_specs()
  local o, any, previous = {}, false, 0
  for at = b + 4, last, 2 do
    local code = ARGV[at]
    local option = specs[code]
    if not option then
      fail('option code of job ' .. id .. ' must be 1 to ' .. JOB_OPTION_COUNT .. ', got ' .. string.format('%q', tostring(code)))
    end
    if option[1] <= previous then
      fail('option codes of job ' .. id .. ' must be ascending without repeats, got ' .. code .. ' after ' .. previous)
    end
    previous = option[1]
    local value = option[4](ARGV[at + 1], option[2], option[5])
    local into = option[3]
    if value == 0 or value == '' then
      -- The default: nothing to set.
    elseif type(into) == 'number' then
      o[into], any = value, true
    else
      p[into][i] = value
    end
  end
  local max_attempts, attempts = o[M.max_attempts] or 0, o[M.attempts] or 0
  if max_attempts > 0 and attempts >= max_attempts then
    fail('attempts of job ' .. id .. ' is ' .. attempts .. '; accepted: below max_attempts (' .. max_attempts .. ')')
  end
  local base, cap = o[M.backoff_base] or 0, o[M.backoff_cap] or 0
  if cap < base then
    fail('backoff_cap_ms of job ' .. id .. ' is ' .. cap ..
      '; accepted: at least backoff_base_ms (' .. base .. ')')
  end
  if o[M.dedup_key] then
    p.dedup_keyed = p.dedup_keyed + 1
    if o[M.dedup_ttl] then p.ttl_keyed = p.ttl_keyed + 1 end
  end
  if any then p.options[i] = o end
  return last
end

-- When parsed job `i` is due, created at `now`.
local function parsed_due(p, i, now)
  local delay, not_before = p.delays[i], p.not_befores[i]
  if not delay and not not_before then return now end
  return math.max(now + (delay or 0), not_before or 0)
end

-- The record of parsed job `i` in `queue`, with sequence number `seq`,
-- created at `now`, as a table (for the scripts that keep it past its
-- creation: an ordering key's admit, a limit key's hold, a waiter).
local function parsed_record(p, i, queue, seq, now)
  local m = new_record()
  m[M.queue], m[M.seq] = queue, seq
  m[M.enqueued_at], m[M.not_before] = now, parsed_due(p, i, now)
  local o = p.options[i]
  if o then
    for field, value in pairs(o) do m[field] = value end
  end
  return m
end

-- The stored bytes of parsed job `i` created from template `t`
-- (record_template of a record of the call: its queue, gate, awaits and
-- enqueued_at) with sequence number `seq`, due at `due`: byte for byte the
-- encode_record of its parsed_record with the template's fields.
local function parsed_bytes(p, i, t, seq, due)
  return spliced_record(t, seq, due, p.options[i], p.payloads[i])
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
