#!lua
-- enqueue.lua: add a batch of jobs to one queue (seed op Enqueue).
--
-- No allow-oom flag: under maxmemory with noeviction Redis refuses the whole
-- script before it runs, so an out-of-memory enqueue writes nothing.
--
-- include: check clock keys job_record job_new waiting ordering handoff flow events gate notify
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  paused; with keyed jobs or a parked worker also limits, lim_starts
--   writes jobs, detached, fifo, waiting, scheduled, dedup and dedup_ttl (with dedup keys), ord_active, ord_blocked,
--          ord_blocked_n, seq, queues, traffic (its enqueued event); for a hand-off also leased, lease_seq, parked;
--          with keyed jobs also limits, lim, lim_held, lim_ready, lim_wake;
--          with a gate also wf_gates (read too), wf_members, wf_expire
-- variant plain: jobs fifo waiting scheduled leased traffic seq lease_seq queues paused parked limits metrics
--   the keys of a call with no gate and no job with a dedup, ordering or
--   limit key or stored detached (13 of 33: the usual single enqueue).
--   Each other key reads false in the variant, and a call that needs one
--   is refused before anything is written (a gate or a detached payload
--   below, a job's key in its parse, lib/job_new.lua); the driver sends
--   such calls here.
-- variant detached: jobs fifo waiting scheduled leased traffic seq lease_seq queues paused parked limits metrics detached
--   the plain variant's keys and the detached payloads (14 of 33): a call
--   of a handle whose namespace detaches (RecordFormat::Detached) with a
--   payload to detach and otherwise what the plain variant takes.
-- ARGV[1] queue name       ARGV[2] wake-up channel
-- ARGV[3] payload limit (bytes)
-- ARGV[4] n, the number of jobs (1..1000)
-- ARGV[5] gate id, "" for none: every job this call creates joins that gate
--         as a member (lib/gate.lua), the gate created open if missing
-- ARGV[6] gate kind, "batch" or "tree" ("" when there is no gate)
-- ARGV[7] record format, "", "compact", "detached:<bytes>" or
--         "compact+detached:<bytes>": with "compact" a job that fits the
--         compact record (lib/job_record.lua: a name and max_attempts at
--         most, due at once) is stored in it; with "detached:N" a job whose
--         payload is N bytes or more (N 1..2^30) is stored detached
--         (lib/job_record.lua: its meta alone, its payload in K.detached);
--         "compact+detached:N" does both, a detached job never compact; only
--         drivers that read them send them, for a namespace whose marker
--         says so (driver/src/record_format.rs)
-- then per job: its id, its payload, k (0..14), then k (code, value) pairs:
-- the options that differ from their defaults (an option not sent is at its
-- default; sending a default is allowed and sets nothing), codes ascending;
-- or its id, its payload and "=": the options of the job before it in this
-- call (the first job cannot), the driver's way of sending a batch of jobs
-- with the same options (two entries a job fewer, nothing to parse again).
--   id                 client-generated ULID (a resent script finds it and creates nothing)
--   payload            JSON text
--   option 1 priority          0..255, higher is claimed first; default 0
--   option 2 delay_ms          due this long after now (Redis clock); default 0
--   option 3 not_before_ms     or due at this unix time in ms (the later of the two wins); default 0, not set
--   option 4 dedup_key         default "", none
--   option 5 dedup_ttl_ms      0: the key is held while the job lives; > 0: held this long from now; default 0
--   option 6 ordering_key      default "", none
--   option 7 max_attempts      default 0, unlimited
--   option 8 retry_window_ms   after enqueued_at + window a failure dead-letters; default 0, none
--   option 9 name              job type name; default "", none
--   option 10 attempts         attempts already recorded (a job moved from elsewhere): below
--                              max_attempts unless that is 0 (unlimited); default 0
--   option 11 backoff_base_ms  a reclaim's delay for the first lapsed lease, doubling per
--                              attempt (lib/retry.lua); default 0: a reclaimed job is due at once
--   option 12 backoff_cap_ms   the longest such delay: at least backoff_base_ms; default 0
--   option 13 limit_key        the job's limit key within this queue (lib/flow.lua); default "", none
--   option 14 trace            the producer's W3C traceparent (55 bytes in version 00), stored
--                              for the worker's span (driver/src/trace); default "", none
-- A job takes 3 + 2k entries (3 with "="); the arguments must end with the last job's.
-- Hand-off: when a worker is parked on the queue (park.lua), the head of the
-- queue is leased to it here, as its claim would (lua/lib/handoff.lua); a
-- call of plain jobs onto a queue where nothing else waits leases them
-- before writing them, so they never enter the fifo list.
-- Limit keys (lib/flow.lua): a job with one makes the queue flow-aware
-- (its limits field is created, all zeros, if missing); due, it is held by
-- its key (after its ordering key admits it, when it has both), delayed it
-- is scheduled as any job. A flow-aware queue hands nothing off. Jobs
-- without a limit key cost nothing more.
-- Gates (lib/gate.lua): with a gate id, the jobs this call creates become
-- its members (record field gate, wf:members, its total and pending), the
-- gate is created open when missing, and its keep time is renewed. A gate
-- that is not open refuses the whole call. Without a gate nothing more is
-- read or written.
-- Reply: flat array, two entries per job in order: code, id.
-- code 1 created: the job was created under that id
-- code 0 duplicate: a live job has the dedup key; the id is the existing job's
-- code 2 created_earlier: an earlier send of this same script created the job
-- code -3 gate_closed: the gate takes no more members (sealed, done or cancelled): nothing was created; the id is the one sent
-- Errors (nothing written): "ERR redq: ..." naming the bad argument.
local limit = uint(ARGV[3], 'payload limit', 1073741824)
local n = uint(ARGV[4], 'job count', 1000)
local HEAD = 7
queue_name(QUEUE)
local gate, gate_kind = text(ARGV[5], 'gate id', 64), ARGV[6]
local format = ARGV[7]
-- The payload size from which a job is stored detached (nil: none is), and
-- whether a job that fits the compact record is stored in it. The standard
-- format skips the call (every producer's enqueue).
local detach_from, compact = nil, false
if format ~= '' then detach_from, compact = detach_from_format(format) end
if gate == '' and gate_kind ~= '' then fail('gate kind must be "" without a gate id, got ' .. string.format('%q', gate_kind)) end
if gate ~= '' and gate_kind ~= 'batch' and gate_kind ~= 'tree' then
  fail('gate kind must be batch or tree, got ' .. string.format('%q', gate_kind))
end
-- An empty batch creates nothing (and HMGET needs at least one field).
if n == 0 then
  if #ARGV ~= HEAD then fail('expected ' .. HEAD .. ' arguments for 0 jobs, got ' .. #ARGV) end
  return {}
end

local p, argc, at = new_parsed(), #ARGV, HEAD
for i = 1, n do at = parse_job(p, i, at, limit, argc) end
if at ~= argc then fail('expected ' .. at .. ' arguments for ' .. n .. ' jobs, got ' .. argc) end
parsed_ids_checked(p)
local ids = p.ids

-- A variant lacking a key reads it as false (the header's variant line): a
-- call that needs one is refused before anything is written, a job with a
-- key in its parse (lib/job_new.lua), a gate here, before its first read.
if gate ~= '' and not K.wf_gates then
  variant_refused('enqueue', 'a gate')
end
-- A job stored detached (lib/job_record.lua) needs K.detached: the driver
-- sends a call with one to the variant detached or the whole script.
if detach_from and not K.detached then
  for i = 1, n do
    if #p.payloads[i] >= detach_from then variant_refused('enqueue', 'a detached payload (job ' .. ids[i] .. ')') end
  end
end

-- Validation is complete but for the gate's state, read first: a gate that
-- takes no more members refuses every job, writing nothing.
local g
if gate ~= '' then
  g = wf.for_joining(gate, gate_kind, now_ms())
  if not g then
    local reply = {}
    for i = 1, n do reply[2 * i - 1], reply[2 * i] = -3, ids[i] end
    return reply
  end
end

-- From here on the script writes.
local now = now_ms()
-- A lone job's count goes as the text '1' (why: EVENTS_MAXLEN in lib/events.lua).
local first_seq = redis.call('INCRBY', K.seq, n == 1 and '1' or n) - n + 1
redis.call('SADD', K.queues, QUEUE)

-- Forget expired TTL-mode dedup keys, only in a call with dedup keys (the
-- others never touch the set): 20, and one more for each TTL key the call
-- adds, so every key added removes at least one expired key while any is
-- left and the set stays bounded by the keys still live plus what the last
-- such call left. A lookup (live_duplicate) checks expiry itself, so what is
-- left changes no answer.
if p.dedup_keyed > 0 then
  for _, dk in ipairs(redis.call('ZRANGEBYSCORE', K.dedup_ttl, '-inf', now, 'LIMIT', 0, 20 + p.ttl_keyed)) do
    redis.call('HDEL', K.dedup, dk)
    redis.call('ZREM', K.dedup_ttl, dk)
  end
end

-- Jobs created earlier in this same batch count as live (their records are
-- written in bulk below, after this loop).
local created = {}

-- One HMGET finds every job a resent script already created. A lone job
-- with no dedup key and no gate (the call a serial producer makes) skips
-- it: its record is written with HSETNX below, which finds a resent job as
-- well, before anything of it is written. One redis.call fewer: about 6k
-- instructions of the 236k such a call costs (callgrind, docs/performance.md
-- round ten).
local unchecked = n == 1 and not g and not (p.options[1] and p.options[1][M.dedup_key])
local already = unchecked and {} or redis.call('HMGET', K.jobs, unpack(ids))

local reply = {}
-- Counted, not measured with #, in the loop over up to 1000 jobs.
local record_pairs, pairs_len = {}, 0
-- The parked worker's record (GET K.parked, false when none is parked),
-- read once a call needs it.
local parked
-- A lone job bound for the fifo list while a worker is parked is kept as
-- its record's meta, its payload apart, until it is handed or written:
-- handed, its leased record is spliced from the meta and joined to the
-- payload once (lib/lease.lua), where the whole record would be made, cut
-- and joined again. Redis's Lua hashes every byte of every string it makes,
-- so each string of the payload's length costs about 10k instructions a KB
-- (docs/performance.md, round twenty-five). The parked record is read for
-- such a job anyway (below); any other job's record is made whole at once,
-- as keeping it apart would cost a string more.
local apart = false
-- The detached jobs' payloads (lib/job_record.lua) as the HSET of
-- K.detached takes them, and by id for a hand-off (lib/lease.lua).
local detached_pairs, detached_of
local fifo, waiting, scheduled, ordered, keyed = {}, {}, {}, {}, {}
local wake, any_keyed = false, false
-- The jobs created into the gate, when there is one.
local joined = {}
-- Each job's record is spliced from the template of its option set
-- (lib/job_new.lua), the same bytes as packing it whole. A template is
-- made compact or whole by the first job that uses it, and a detached
-- job's meta is never compact: under compact+detached a call may hold both
-- kinds with one option set, so the detached jobs' templates are apart.
local templates = {}
local whole_templates = compact and {} or templates
-- What a job's options say about its dedup key and its place, read once
-- for each run of jobs sharing one options table (a batch of like jobs
-- shares one: lib/job_new.lua).
local last_options, dk, plain = nil, nil, true
for i = 1, n do
  local code, id = 1, ids[i]
  local options = p.options[i]
  if options ~= last_options then
    last_options = options
    dk = options and options[M.dedup_key]
    plain = not options or not (options[M.ordering_key] or options[M.limit_key] or options[M.priority])
  end
  local existing = dk and live_duplicate(dk, now, created)
  if already[i] or created[id] then
    code = 2
  elseif existing then
    code, id = 0, existing
  else
    local seq, due = first_seq + i - 1, parsed_due(p, i, now)
    if g then joined[#joined + 1] = id end
    created[id] = true
    local detached = detach_from and #p.payloads[i] >= detach_from
    if n == 1 and plain and due <= now and not detached then
      parked = redis.call('GET', K.parked)
      apart = parked and true or false
    end
    if detached then
      -- The meta alone, packed as the record would be with its payload.
      local payload = p.payloads[i]
      record_pairs[pairs_len + 1], record_pairs[pairs_len + 2] =
        id, detached_meta(parsed_bytes(p, i, whole_templates, QUEUE, gate, now, seq, due, false, true))
      if not detached_pairs then detached_pairs, detached_of = {}, {} end
      detached_pairs[#detached_pairs + 1] = id
      detached_pairs[#detached_pairs + 1] = payload
      detached_of[id] = payload
    else
      record_pairs[pairs_len + 1], record_pairs[pairs_len + 2] = id, parsed_bytes(p, i, templates, QUEUE, gate, now, seq, due, compact, apart)
    end
    pairs_len = pairs_len + 2
    -- Only a job with a dedup key takes one (a call per job cost a batch
    -- about 0.8k instructions a job, callgrind).
    if dk then take_dedup(id, options, now) end
    if plain then
      -- No key, priority 0.
      if due > now then
        scheduled[#scheduled + 1] = due
        scheduled[#scheduled + 1] = id
      else
        fifo[#fifo + 1] = id
        wake = true
      end
    else
      -- The record as a table, for the score and for admit() and hold(),
      -- which keep it.
      local m = parsed_record(p, i, QUEUE, seq, now)
      if g then m[M.gate] = gate end
      local limit_key = m[M.limit_key]
      if limit_key ~= '' then any_keyed = true end
      if m[M.ordering_key] ~= '' then
        ordered[#ordered + 1] = { id = id, m = m, due = due }
      elseif due > now then
        scheduled[#scheduled + 1] = due
        scheduled[#scheduled + 1] = id
      elseif limit_key ~= '' then
        keyed[#keyed + 1] = { id = id, m = m }
      else
        waiting[#waiting + 1] = waiting_score(m)
        waiting[#waiting + 1] = id
        wake = true
      end
    end
  end
  reply[2 * i - 1], reply[2 * i] = code, id
end

-- Records first (admit() checks that an ordering key's holder exists), in
-- bulk; then each job enters its queue: jobs with an ordering key one by one
-- through admit(), the rest with one RPUSH or ZADD per structure.
-- A call whose every created job is plain (bound for the fifo list) hands
-- them to a parked worker before they are written (lib/handoff.lua
-- hand_off_fresh): the first `handed` are written there, leased, and are
-- neither written nor pushed here. When other jobs wait, the worker it
-- checked is handed the head below.
-- A resent lone job (unchecked above) creates nothing: { 2, id } is the
-- reply the HMGET would have led to, and nothing but the sequence and the
-- queue's name (both written by any resend) was written before it.
local handed, taking
if #fifo > 0 and pairs_len == 2 * #fifo then
  if parked == nil then parked = redis.call('GET', K.parked) end
  if parked then
    -- hand_off_fresh writes records without looking: an unchecked job is
    -- looked up first (only when a worker is parked), and is checked then.
    if unchecked then
      if redis.call('HEXISTS', K.jobs, ids[1]) == 1 then return { 2, ids[1] } end
      unchecked = false
    end
    handed, taking = hand_off_fresh(parked, record_pairs, now, apart and p.payloads or nil, detached_of)
  end
end
local written = handed or 0
-- The lone job's record whole, unless it was handed (and written there).
if apart and written == 0 then record_pairs[2] = record_pairs[2] .. p.payloads[1] end
local CHUNK = 500
if unchecked and written == 0 then
  if redis.call('HSETNX', K.jobs, ids[1], record_pairs[2]) == 0 then return { 2, ids[1] } end
else
  for from = 2 * written + 1, #record_pairs, 2 * CHUNK do
    redis.call('HSET', K.jobs, unpack(record_pairs, from, math.min(from + 2 * CHUNK - 1, #record_pairs)))
  end
end
-- Every detached job's payload, handed or not (a resent lone job returned
-- above, before this).
if detached_pairs then
  for from = 1, #detached_pairs, 2 * CHUNK do
    redis.call('HSET', K.detached, unpack(detached_pairs, from, math.min(from + 2 * CHUNK - 1, #detached_pairs)))
  end
end
for from = written + 1, #fifo, 2 * CHUNK do
  redis.call('RPUSH', K.fifo, unpack(fifo, from, math.min(from + 2 * CHUNK - 1, #fifo)))
end
if g and #joined > 0 then wf.join_created(gate, g, joined, now) end
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
-- the others. Its record is read here unless it was above: a call that
-- finds none loads no hand-off code (lib/handoff.lua).
if handed then
  wake = handed < #fifo
elseif taking then
  wake = hand_off_to(taking, now)
elseif wake then
  if parked == nil then parked = redis.call('GET', K.parked) end
  if parked then wake = hand_off(parked, now) end
end
if wake then wake_workers(QUEUE) end
-- One event per call, however many jobs it created (none for a resend).
if pairs_len == 2 then emit(K.traffic, 'enqueued', QUEUE, now, 'count', '1', 'id', record_pairs[1])
elseif pairs_len > 0 then emit(K.traffic, 'enqueued', QUEUE, now, 'count', pairs_len / 2) end
return reply
