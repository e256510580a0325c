#!lua flags=allow-oom
-- claim.lua: lease up to `limit` due jobs of one queue (seed op Lease).
--
-- allow-oom: claiming must keep draining a queue while Redis is out of memory.
-- Before popping, the script (bounded each call) returns lapsed leases to the
-- queue (seed op Reclaim), promotes scheduled jobs that are now due, and moves
-- released ordering-key successors into the queue. A paused queue hands out
-- nothing. Within a priority, jobs come out in enqueue (seq) order.
--
-- Flow control (lib/flow.lua): one HGET of the queue's limits field a call.
-- Without it, nothing else changes. With it (a flow-aware queue), the claim
-- takes at most the queue-wide room (concurrency: its leases; rate: its
-- starts in the window; its push-back), first puts back keys whose rate
-- window or push-back ended (at most 100), then takes due jobs in claim
-- order from the waiting jobs and the ready keys, each key within its own
-- room (lib/flow_claim.lua), and records the starts that a rate counts.
-- Cost bound: O(taken + keys woken + ready keys found without room) calls.
-- include: check clock keys retry promote waiting lease flow_spec flow_claim metrics
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  paused, limits, detached (the payload of a lone detached record),
--          retention (when it dead-letters: the dead-letter bound, lib/dead_bound.lua)
--   writes jobs, fifo, waiting, scheduled, leased, dead, stats, dedup, ord_active,
--          ord_blocked, ord_ready, ord_blocked_n, events, lease_seq,
--          lim, lim_starts, lim_held, lim_ready, lim_wake, metrics (lib/metrics.lua: waits),
--          progress, logs, detached (the trim of a queue with a dead-letter bound)
-- variant plain: jobs fifo waiting scheduled leased lease_seq paused limits metrics ord_ready detached
--   the keys of a claim that only leases waiting jobs: of a queue without
--   limits, with no lapsed lease to reclaim, no scheduled job due and no
--   ordering successor released (11 of 39: what a worker's claims usually
--   are; detached among them, since only the records it pops say whether
--   any is detached, after the pop has written). Each other key reads
--   false in the variant, and a call that needs one is refused before
--   anything is written (lib/check.lua
--   variant_refused): each refusal follows the read that finds the work,
--   the lapsed leases' count below, the due counts in lib/promote.lua and
--   the limits below; the driver sends the call to the whole script then,
--   and that queue's claims for a while after (driver/src/queue.rs, run_variant).
-- ARGV[1] queue name      ARGV[2] wake-up channel
-- ARGV[3] limit (1..1000) ARGV[4] lease_ms (1..MAX_MS)
-- ARGV[5] worker node id (decimal u64, kept as text)
-- ARGV[6] worker instance (u32)
-- ARGV[7] (optional) start_by_ms: Redis time (unix ms) after which this
--   claim leases nothing and writes nothing, answering { now_ms } as if
--   nothing were due: its caller has given up on the reply by then (Redis
--   stalled by CLIENT PAUSE, DEBUG SLEEP or a slow script held the call),
--   and jobs leased now would wait out their leases, an attempt counted
--   (driver/src/redis_clock.rs).
-- Reply: { now_ms, id1, record1, id2, record2, ... } where a record is the
-- job record after leasing (lease id, expiry, holder set): its packed meta,
-- then its payload; a detached record's (lib/job_record.lua) is the array
-- { meta, payload }, or, in a claim of several detached records, { meta }
-- with its payload left in K.detached for the caller to read
-- (lib/lease.lua claim_payloads).
local RECLAIM_PER_CALL = 100
local PROMOTE_PER_CALL = 1000
queue_name(QUEUE)
local limit = uint(ARGV[3], 'claim limit', 1000)
local lease_ms = uint(ARGV[4], 'lease_ms', MAX_MS)
if limit < 1 then fail('claim limit must be at least 1') end
if lease_ms < 1 then fail('lease_ms must be at least 1') end
local node = decimal_u64(ARGV[5], 'worker node')
local instance = uint(ARGV[6], 'worker instance', MAX_U32)
local start_by = ARGV[7] and uint(ARGV[7], 'claim start_by_ms', MAX_TIME_MS)

local now = now_ms()
if start_by and now > start_by then return { now } end
-- Counted first: a count costs about half a scan that finds nothing, and a
-- claim with nothing lapsed then never builds retry.lua's functions.
if any_lapsed(now) then
  if not K.dead then variant_refused('claim', 'lapsed leases to reclaim') end
  reclaim_lapsed(now, RECLAIM_PER_CALL)
end

promote_scheduled(now, PROMOTE_PER_CALL)
promote_ready(now, PROMOTE_PER_CALL)

local reply = { now }
if redis.call('SISMEMBER', K.paused, QUEUE) == 1 then return reply end

local spec = flow_spec()
if spec and not K.lim then variant_refused('claim', 'a queue with limits') end
local ids, key_of, touched
if not spec then
  ids = pop_waiting(limit)
else
  wake_due_keys(now, WAKE_PER_CALL)
  local budget = math.min(limit, queue_room(spec, now))
  if budget <= 0 then return reply end
  ids, key_of, touched = pop_flow(budget, limit, now)
end
local leased, waits, detached = {}, {}, nil
if #ids > 0 then leased, waits, detached = lease_jobs(ids, lease_ms, node, instance, now) end
if detached then claim_payloads(leased, detached) end
if spec then flow_leased(leased, key_of, touched, spec, now) end
record_waits(waits, now)
-- One table constructor: appending the pairs one by one cost about 1k
-- instructions a job.
return { now, unpack(leased) }
