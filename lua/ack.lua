#!lua flags=allow-oom
-- ack.lua: leased jobs are done; remove them for good (seed op Ack), keeping
-- them with their results when the queue keeps finished jobs.
--
-- Takes a batch so a busy worker acknowledges many jobs in one call; each
-- job is still fenced by its own lease id.
-- allow-oom: acknowledging frees memory and must work when Redis is full.
-- Keeping: when the queue has a retention policy (lib/retention_spec.lua; one HGET per
-- call reads it), each acknowledged job leaves a kept record (lib/kept_record.lua)
-- in kept, indexed in completed, and the call trims what the queue keeps
-- back within its policy (at most 2 * kept + 16 records, lib/kept.lua), and
-- publishes the ids it kept, space-separated, on the wake-up channel ..
-- ':finished' (what RedisQueue::wait_for listens to).
-- Without a policy nothing is kept and nothing else is read.
-- Flow control (lib/flow.lua): one HGET per call reads the queue's limits
-- field; without it nothing else is read. With it, each acknowledged job
-- with a limit key frees its key's slot (once per key per call), and the
-- wake-up channel is told when that gives a held job room, or when the
-- queue was at its queue-wide concurrency and jobs wait.
-- Gates (lib/gate.lua): one EXISTS of wf:gates a call; only while some gate
-- exists are the acknowledged records decoded whole, and a job that is a
-- member of gates counts toward each (completed, with its result), which
-- may fire them; each gate's record is read and written once a call, however
-- many of its members the call acknowledges.
-- include: check clock keys job_record lease ordering stats retention_spec kept notes flow flow_claim events metrics gate notify
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  jobs, dedup, ord_active, ord_blocked, retention, kept, tombstones, limits,
--          fifo, waiting, lim_starts, lim_held (the last four only when flow-aware)
--   writes jobs, detached (detached records' payloads), leased, stats, dedup, ord_active, ord_blocked, ord_ready, ord_blocked_n,
--          kept, completed, cancelled, tombstones, tombstones_at, retention,
--          progress and logs (only for jobs flagged noted), lim, lim_ready, lim_wake,
--          metrics (lib/metrics.lua: completions and run times, one HMGET and HSET a call),
--          traffic (its completed event); with gates also events (a gate done)
--          with gates: wf_gates (read too), wf_outcomes, wf_of, wf_members, wf_expire, ord_ready
-- variant plain: jobs leased stats metrics traffic retention limits wf_gates kept tombstones
--   the keys of an ack on a queue that keeps no finished jobs, has no
--   limits and no gates exist, of jobs without notes, without a dedup or
--   ordering key and not detached (10 of 37: what a worker's acks usually
--   are). Each other key reads false in the variant, and a call that needs
--   one is refused before anything is written (lib/check.lua
--   variant_refused: noted jobs in the parse, the queue's state below, a
--   detached record or a job's keys in the loop below, lib/ordering.lua);
--   the driver sends the call to the whole script then,
--   and that queue's acks for a while after (driver/src/queue.rs, run_variant).
-- variant detached: jobs leased stats metrics traffic retention limits wf_gates kept tombstones detached
--   the plain variant's keys and the detached payloads: the acks of a
--   handle whose namespace detaches large payloads (RecordFormat::Detached),
--   whose jobs are a mix of detached and whole records. Refuses what the
--   plain variant refuses but a detached record.
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] n (1..1000), then n groups, each either (3 + 2n arguments)
--   job id, lease id (0 = whatever lease is current)
-- or (3 + 4n arguments)
--   job id, lease id, run_ms (how long the run took), result (JSON text of
--   at most 65536 bytes, '' = none; kept only when the queue keeps jobs)
-- or (3 + 5n arguments) those four and noted (1 = the job has notes,
--   lib/notes.lua: they are deleted with it; the worker knows, so an ack
--   of jobs without notes issues no note command)
-- Reply: one code per job, in order:
-- code 1 acknowledged: the job is done and removed (kept, if the queue keeps jobs)
-- code 3 acknowledged_unkept: acknowledged, and its result (given, not '') is
--   kept nowhere result() reads: the queue keeps no finished jobs
-- code 0 already_gone: the job no longer exists (a repeated ack: harmless)
-- code -1 lease_lost: the job is not held under this lease; nothing changed for it
-- code -2 cancelled: an operator cancelled the job (cancel.lua); nothing changed
local MAX_RESULT_BYTES = 65536
-- A record's lease, queue and key fields (record_head's, M positions 1 to 8)
-- and its name, in one decode: the name files the ack's metrics
-- (lib/metrics.lua record_acks), and decoding the head and then the name
-- again cost 3 to 5k instructions a job. head_then_name takes
-- unpack_limit's offset, then fields 1 to M.name: the head as a table, the
-- name picked from the rest (no table of them all).
local function head_then_name(_, a, b, c, d, e, f, g, h, ...)
  return { a, b, c, d, e, f, g, h }, (select(M.name - 8, ...))
end
-- The third value is whether the record is detached (lib/job_record.lua).
-- Every length stored_length or detached_length takes has the name
-- (M.name <= OLDEST_JOB_LEN); a detached record's fields start after its
-- five-byte array32 header, a standard one's after three bytes. Only a
-- compact record (never leased, so never acknowledged) or a damaged one
-- takes the general decode.
local function head_and_name(raw)
  if stored_length(raw) then
    return head_then_name(cmsgpack.unpack_limit(raw, M.name, 3))
  end
  if detached_length(raw) then
    local head, name = head_then_name(cmsgpack.unpack_limit(raw, M.name, 5))
    return head, name, true
  end
  local m, payload = split_record(raw)
  return m, m[M.name], payload == ''
end
queue_name(QUEUE)
local n = uint(ARGV[3], 'ack count', 1000)
-- An empty batch acknowledges nothing (and HMGET needs at least one field).
if n == 0 then return {} end
local stride = (#ARGV - 3) / n
if stride ~= 2 and stride ~= 4 and stride ~= 5 then
  fail('expected ' .. (3 + 2 * n) .. ', ' .. (3 + 4 * n) .. ' or ' .. (3 + 5 * n)
    .. ' arguments, got ' .. #ARGV)
end
local ids, leases, runs, results, noted = {}, {}, {}, {}, {}
for i = 1, n do
  local at = 4 + stride * (i - 1)
  local id = ARGV[at]
  if #id > 64 then text(id, 'job id', 64) end
  ids[i] = id
  leases[i] = uint(ARGV[at + 1], 'lease id', 9007199254740991)
  if stride == 5 then
    noted[i] = uint(ARGV[at + 4], 'noted flag', 1) == 1
    if noted[i] and not K.progress then variant_refused('ack', 'a job with notes (job ' .. text(id, 'job id', 64) .. ')') end
  end
  if stride >= 4 then
    runs[i] = uint(ARGV[at + 2], 'run_ms', MAX_MS)
    results[i] = ARGV[at + 3]
    if #results[i] > MAX_RESULT_BYTES then
      fail('a result must be at most ' .. MAX_RESULT_BYTES .. ' bytes, got ' .. #results[i])
    end
  end
end
-- The ids' control characters in one check of them all (lib/check.lua
-- texts: the lengths were checked above).
texts(ids, 'job id', 64)
-- One HMGET for the batch: each redis.call costs about a microsecond before
-- the command does anything.
local metas = redis.call('HMGET', K.jobs, unpack(ids))
local codes, done, acked, forgotten, names = {}, {}, {}, {}, {}
-- The detached records acknowledged, made at the first.
local detached_done
local policy = retention_policy()
local flow = flow_spec()
local gated = redis.call('EXISTS', K.wf_gates) == 1
-- The variant's refusals of the queue's state (its first write is below).
if policy and not K.completed then variant_refused('ack', 'a queue that keeps finished jobs') end
if flow and not K.lim then variant_refused('ack', 'a queue with limits') end
if gated and not K.wf_outcomes then variant_refused('ack', 'gates in the namespace') end
if gated then wf.batch_begin() end
local now = now_ms()
local kept_raws = {}
-- Flow-aware queues: acknowledged jobs per limit key, keys in first-seen order.
local freed_of, freed_keys = {}, {}
for i = 1, n do
  local id, raw = ids[i], metas[i]
  if not raw or acked[id] then
    -- Gone, or listed twice in this batch and already acknowledged above.
    codes[i] = 0
    if not raw and finished_as(id) == 'cancelled' then codes[i] = -2 end
  else
    local m, name, detached = head_and_name(raw)
    if m[M.queue] ~= QUEUE or not lease_matches(m, leases[i]) then
      codes[i] = -1
    else
      if detached then
        if not K.detached then variant_refused('ack', 'a detached record (job ' .. id .. ')') end
        detached_done = detached_done or {}
        detached_done[#detached_done + 1] = id
      end
      codes[i] = 1
      -- A result the queue does not keep is lost to result() and wait_for:
      -- said, so that the driver warns (one compare a job).
      if not policy and results[i] and results[i] ~= '' then codes[i] = 3 end
      acked[id] = true
      names[i] = name
      release_keys(id, m)
      done[#done + 1] = id
      if noted[i] then forgotten[#forgotten + 1] = id end
      local full = (policy or gated) and split_record(raw)
      if gated then wf.count(id, full, 'completed', results[i] or '', now) end
      local key = flow and (full and full[M.limit_key] or record_limit_key(raw))
      if key and key ~= '' then
        if not freed_of[key] then
          freed_of[key] = 0
          freed_keys[#freed_keys + 1] = key
        end
        freed_of[key] = freed_of[key] + 1
      end
      if policy then
        local k = new_kept('completed', QUEUE, now)
        k[KR.name] = full[M.name]
        k[KR.attempt] = full[M.attempts] + 1
        k[KR.holder_node] = full[M.worker_node]
        k[KR.holder_instance] = full[M.worker_instance]
        k[KR.enqueued_at] = full[M.enqueued_at]
        k[KR.run_ms] = runs[i] or 0
        k[KR.result] = results[i] or ''
        kept_raws[#kept_raws + 1] = encode_kept(k)
      end
    end
  end
end
if gated then wf.batch_store() end
record_acks(names, runs, n, now)
if #done > 0 then
  redis.call('HDEL', K.jobs, unpack(done))
  if detached_done then redis.call('HDEL', K.detached, unpack(detached_done)) end
  redis.call('ZREM', K.leased, unpack(done))
  if #forgotten > 0 then forget_notes(forgotten) end
  bump_stats('p', now, #done)
  -- One event per call (its count; the id when it is one job), not per job.
  if #done == 1 then emit(K.traffic, 'completed', QUEUE, now, 'count', '1', 'id', done[1])
  else emit(K.traffic, 'completed', QUEUE, now, 'count', #done) end
  if policy then
    keep(done, kept_raws, K.completed, now)
    trim_kept(policy, now, #done)
    redis.call('PUBLISH', CHANNEL .. ':finished', table.concat(done, ' '))
  end
  if flow then
    local wake = false
    if #freed_keys > 0 then wake = free_key_slots(freed_keys, freed_of, now) end
    if wake or queue_slots_freed(#done) then wake_workers(QUEUE) end
  end
end
return codes
