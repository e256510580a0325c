-- lib/job_new.lua: creating a job from its enqueue entries (id, payload,
-- then the options that differ from their defaults: enqueue.lua's header
-- lays them out), shared by enqueue.lua and by gate_seal.lua (which creates
-- its waiters): one parser, one record builder, one dedup rule.
-- include: check keys job_record

-- The options a job may send, one row each in code order (enqueue.lua's
-- header, `option N`; driver/src/enqueue_args.rs pins its codes to that
-- header), sent in ascending order. Each row: the code as sent, the name a
-- refusal uses, where the value goes (a record field's M position, or the
-- parsed array of a part of the due time), its bound, and whether it is
-- text (else a whole number). A value equal to its default sets nothing.
-- Built by the call's first job that parses an option (most calls send
-- none; a job repeating the last one's options parses none), as one flat
-- array: one table literal costs far less than five (a lone named enqueue
-- paid about 22k instructions for the five).
local JOB_OPTION_COUNT = 14
local OPTION_ROW = 5
-- composed memo: job_options (the option table, built at first use)
local job_options
-- The last parse of a job's option entries (see parse_job): its count and
-- entries as sent, and what they gave.
-- composed memo: option_memo (a cache of the parse of the entries, the last one made)
local option_memo
local function option_specs()
  if not job_options then
    job_options = {
      '1', 'priority', M.priority, 255, false,
      '2', 'delay_ms', 'delays', MAX_MS, false,
      '3', 'not_before_ms', 'not_befores', MAX_TIME_MS, false,
      '4', 'dedup key', M.dedup_key, 512, true,
      '5', 'dedup_ttl_ms', M.dedup_ttl, MAX_MS, false,
      '6', 'ordering key', M.ordering_key, 512, true,
      '7', 'max_attempts', M.max_attempts, MAX_U32, false,
      '8', 'retry_window_ms', M.retry_window, MAX_MS, false,
      '9', 'job name', M.name, 256, true,
      '10', 'attempts', M.attempts, MAX_U32, false,
      '11', 'backoff_base_ms', M.backoff_base, MAX_MS, false,
      '12', 'backoff_cap_ms', M.backoff_cap, MAX_MS, false,
      '13', 'limit key', M.limit_key, 512, true,
      '14', 'trace', M.trace, 55, true,
    }
  end
  return job_options
end

-- Parsed jobs: one array per part, indexed by the job's place in the call
-- (enqueue takes up to 1000 a call). options[i] is nil for a job with every
-- option at its default, else its record fields that differ (M position ->
-- value), and option_sets[i] names that set of fields and values (jobs
-- with the same set share a record template: enqueue.lua); delays and
-- not_befores are set only when sent. dedup_keyed counts the jobs with a
-- dedup key, ttl_keyed those whose key has a TTL. Jobs that send the same
-- options share one options table: read it, never write it. Every field is
-- in the constructor: a field added later grows the table's hash part,
-- rehashing it.
local function new_parsed()
  return { ids = {}, payloads = {}, options = {}, option_sets = {}, delays = {}, not_befores = {},
    dedup_keyed = 0, ttl_keyed = 0 }
end

-- Job `i` takes a parse that passed every check: its options `o` (nil for
-- none) named `set`, its due time's parts, and its count of dedup keys.
-- Only what is set is stored: in Lua 5.1 storing nil under a new key
-- inserts it, growing the table as a value would.
local function take_parse(p, i, o, set, delay, not_before)
  if o then
    p.options[i], p.option_sets[i] = o, set
    if o[M.dedup_key] then
      p.dedup_keyed = p.dedup_keyed + 1
      if o[M.dedup_ttl] then p.ttl_keyed = p.ttl_keyed + 1 end
    end
  end
  if delay then p.delays[i] = delay end
  if not_before then p.not_befores[i] = not_before end
end

-- Validate the job whose entries start at ARGV[b + 1] (id, payload, option
-- count, then the options' (code, value) pairs) into `p` at `i`; `limit` is
-- the payload limit in bytes, `argc` the arguments there are. Returns the
-- position of the job's last entry. Refuses (lib/check.lua) a bad field by
-- name, an unknown, repeated or misordered option code, and entries past
-- `argc`. The id's length is checked here, its characters by the caller
-- for every job at once (parsed_ids_checked), before anything is written.
local function parse_job(p, i, b, limit, argc)
  if b + 3 > argc then fail('job ' .. i .. ' needs 3 entries at least (id, payload, option count); the arguments end') end
  local id = ARGV[b + 1]
  local payload = ARGV[b + 2]
  if #id == 0 then fail('job id must not be empty') end
  if #id > 64 then text(id, 'job id', 64) end
  if #payload == 0 or #payload > limit then
    -- A refusal names the job: its id is checked first (text), so that a
    -- bad one is what the refusal names, as it was before the batch's ids
    -- were checked together.
    fail('payload of job ' .. text(id, 'job id', 64) .. ' is ' .. #payload .. ' bytes; accepted: 1 to ' .. limit)
  end
  p.ids[i], p.payloads[i] = id, payload
  local count = ARGV[b + 3]
  -- Most jobs set no option; of those that do, nearly every one sends the
  -- same options as the job before it (one producer, one kind of job), and
  -- the driver then sends "=" for them (driver/src/enqueue_args.rs): two
  -- entries fewer a job, and nothing to compare.
  if count == '0' then return b + 3 end
  if count == '=' then
    if i == 1 then fail('option count of job 1 is "=", the options of the job before it, but it has none before it') end
    local j = i - 1
    take_parse(p, i, p.options[j], p.option_sets[j], p.delays[j], p.not_befores[j])
    return b + 3
  end
  -- The same entries as the job an earlier call parsed last: its parse.
  -- A function library keeps that between calls (a script starts each
  -- call without it), so a lone job like the last call's (one producer,
  -- one kind of job) parses nothing again.
  local memo = option_memo
  if memo and memo.count == count and b + 3 + 2 * memo.sent <= argc then
    local entries, same = memo.entries, true
    for k = 1, 2 * memo.sent do
      if entries[k] ~= ARGV[b + 3 + k] then
        same = false
        break
      end
    end
    if same then
      take_parse(p, i, memo.o, memo.set, memo.delay, memo.not_before)
      return b + 3 + 2 * memo.sent
    end
  end
  -- A fresh parse's refusals name the job: its id is checked first (a
  -- fresh parse is rare, the first of a call's or a producer's options;
  -- the others are checked together by the caller).
  text(id, 'job id', 64)
  local sent_count = count
  count = uint(count, 'option count of job ' .. id, JOB_OPTION_COUNT)
  local last = b + 3 + 2 * count
  if last > argc then
    fail('job ' .. id .. ' has ' .. count .. ' options, but the arguments end after ' .. (argc - b - 3) .. ' of their entries')
  end
  local spec = option_specs()
  local o, set, previous = {}, '', 0
  for at = b + 4, last, 2 do
    local code = ARGV[at]
    -- A code is exactly its row's text: tonumber alone would take " 1",
    -- "01", "1.0" or "0x1"; a fraction or a number out of range finds no row.
    local n = tonumber(code)
    local row = n and OPTION_ROW * (n - 1)
    if not row or spec[row + 1] ~= code then
      fail('option code of job ' .. id .. ' must be 1 to ' .. JOB_OPTION_COUNT .. ', got ' .. string.format('%q', tostring(code)))
    end
    if n <= previous then
      fail('option codes of job ' .. id .. ' must be ascending without repeats, got ' .. code .. ' after ' .. previous)
    end
    previous = n
    local raw = ARGV[at + 1]
    local value
    local name, field, bound = spec[row + 2], spec[row + 3], spec[row + 4]
    if spec[row + 5] then value = text(raw, name, bound) else value = uint(raw, name, bound) end
    if value == 0 or value == '' then
      -- The default: nothing to set.
    elseif type(field) == 'number' then
      -- Text has no control characters: "\n" separates the set's parts.
      o[field], set = value, set .. code .. '\n' .. value .. '\n'
    else
      p[field][i] = value
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
  -- A variant of enqueue without the keys a job's option needs reads them
  -- as false (lua/README.md, "Variants"): the job is refused here, before
  -- the call writes. Only a fresh parse checks: the paths above take a
  -- parse that passed, in this call or in this library's last.
  local lacking = o[M.dedup_key] and not K.dedup and 'a dedup key'
    or o[M.ordering_key] and not K.ord_active and 'an ordering key'
    or o[M.limit_key] and not K.lim and 'a limit key'
  if lacking then
    variant_refused('enqueue', lacking .. ' (job ' .. id .. ')')
  end
  -- Its due time's parts were stored as parsed; an option set of only
  -- defaults is none (a dedup key makes the set non-empty).
  if set ~= '' then take_parse(p, i, o, set) end
  -- Every check passed: the parse may be taken again (above).
  option_memo = { count = sent_count, sent = count, entries = { unpack(ARGV, b + 4, last) },
    o = p.options[i], set = p.option_sets[i], delay = p.delays[i], not_before = p.not_befores[i] }
  return last
end

-- The parsed jobs' ids are free of control characters (parse_job checked
-- their lengths): all at once, before the caller writes anything.
local function parsed_ids_checked(p)
  texts(p.ids, 'job id', 64)
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

-- The template parts (lib/job_record.lua template_parts) last made, with
-- what they were made of: the queue, the gate ('' for none) and the option
-- set. Nothing else of a record outside each job's own numbers is set at
-- enqueue, so those three decide the parts. A function library keeps them
-- from one call to the next: a lone job like the last call's (one producer,
-- one kind of job) builds and packs no record for them (building one and
-- comparing it field by field with the last cost about 20k instructions of
-- a lone enqueue's 230k, callgrind).
-- composed memo: fresh_parts (a cache of the last template parts, by queue, gate and option set)
local fresh_parts

-- The stored bytes of parsed job `i` of `queue`, created into gate `gate`
-- ('' for none) at `now`, with sequence number `seq`, due at `due`, spliced
-- from the template of its option set in `templates` (the call's, made
-- there once a set): byte for byte the encode_record of its parsed_record
-- (with the gate), or its compact form (lib/job_record.lua) when `compact`
-- and the job fits it. A call whose jobs share their options packs those
-- once. With `meta_only` the payload is left off (the caller joins it).
local function parsed_bytes(p, i, templates, queue, gate, now, seq, due, compact, meta_only)
  local set = p.option_sets[i] or ''
  local t = templates[set]
  if not t then
    local parts = fresh_parts
    if not (parts and parts.queue == queue and parts.gate == gate and parts.set == set) then
      -- Its own numbers (seq, enqueued_at, due time) are left out of the
      -- parts, so any will do here.
      local m = parsed_record(p, i, queue, 0, 0)
      m[M.gate] = gate
      parts = template_parts(m)
      parts.queue, parts.gate, parts.set = queue, gate, set
      fresh_parts = parts
    end
    t = record_template(parts, now, compact)
    templates[set] = t
  end
  return spliced_record(t, seq, due, meta_only and '' or p.payloads[i])
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

-- Job `id` takes its dedup key, if it has one: `m` is its record, or its
-- parsed options (fields left at their defaults absent).
local function take_dedup(id, m, now)
  local dk = m[M.dedup_key]
  if not dk or dk == '' then return end
  redis.call('HSET', K.dedup, dk, id)
  local ttl = m[M.dedup_ttl] or 0
  if ttl > 0 then redis.call('ZADD', K.dedup_ttl, now + ttl, dk) end
end
