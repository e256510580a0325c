#!lua flags=allow-oom
-- dead_letter_job.lua: an operator moves one job that waits its turn
-- (waiting, scheduled, held or blocked) to the dead-letter set, unrun, to
-- look at or requeue later (Sidekiq's "kill", asynq's "archive"): a poison
-- job backing off for its tenth attempt, a job whose payload must be fixed
-- before it runs.
--
-- It dies as a failed job dies (lib/retry.lua's dead path): its death time
-- set, its attempts as they were, its error the operator's words
-- (`dead-lettered by an operator (WHO): REASON`), its gates counting it
-- failed, its ordering key passed to the next job behind it and its dedup
-- key freed, a `dead` event (with `by`, and `from STATE` as its detail),
-- its metrics' dead outcome, and the
-- queue's dead-letter bound applied (lib/dead_bound.lua). A requeue
-- (requeue_dead.lua) brings it back as any dead letter, its attempts reset
-- to the count the operator gives (0 by default).
--
-- A running job is refused (code leased: cancel or delete it), and so is
-- one awaiting its gate (code awaiting: the gate decides it) and a dead
-- one (code dead). The state is checked here, so a dead-letter racing a
-- claim is ordered by Redis: either before the claim, or refused.
--
-- allow-oom: a dead letter frees what the job held, and an operator must be
-- able to set a poison job aside while Redis is full.
-- include: check clock keys job_store ordering job_state unplace flow events metrics gate notify dead_bound
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  leased, waiting, scheduled, fifo, ord_ready, limits, lim_starts
--   writes jobs, dead, waiting, scheduled, dedup, ord_active, ord_blocked,
--          ord_ready, ord_blocked_n, lim, lim_held, lim_ready, lim_wake,
--          events, metrics, wf_gates, wf_members, wf_outcomes, wf_of,
--          retention (read: the dead-letter bound), detached, progress,
--          logs (the dead letters the bound trims)
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] job id       ARGV[4] reason ("" = none; cut to 1024 bytes)
-- last ARGV, optional: the operator's actor, marked (lib/events.lua: ARGC leaves it out)
-- Reply: { code, state, bound_deleted } with state the job's state before
-- the call (waiting | scheduled | held | blocked | awaiting | dead | leased),
-- "" when not found, and bound_deleted how many older dead letters the
-- queue's dead-letter bound deleted in this call (0 without a bound): the
-- caller says so, since a batch of dead-letters in a bounded queue can
-- evict the jobs it set aside itself.
-- code 1 dead_lettered: the job is in the dead-letter set
-- code 0 not_found: no job with this id in this queue
-- code 3 leased: the job is running under a lease; nothing changed
-- code 4 dead: the job is a dead letter already; nothing changed
-- code 8 awaiting: the job waits on its gate; nothing changed
queue_name(QUEUE)
local MAX_REASON_BYTES = 1024
local id = text(ARGV[3], 'job id', 64)
local reason = ARGV[4]
if type(reason) ~= 'string' then fail('reason is missing ("" for none)') end
reason = string.sub(reason, 1, MAX_REASON_BYTES)

local m = load_meta(id)
if not m or m[M.queue] ~= QUEUE then return { 0, '', 0 } end
local state, where = state_of(id, m)
local REFUSED = { leased = 3, dead = 4, awaiting = 8 }
if REFUSED[state] then return { REFUSED[state], state, 0 } end

local now = now_ms()
unplace(id, m, state, where)
if state == 'held' then settle_keys(now) end
local err = 'dead-lettered by an operator'
if BY ~= '' then err = err .. ' (' .. BY .. ')' end
if reason ~= '' then err = err .. ': ' .. reason end
m[M.error] = err
m[M.died_at] = now
count_outcome(m[M.name], MV.dead, now)
wf.count(id, m, 'dead', err, now)
store_meta(id, m)
redis.call('ZADD', K.dead, now, id)
release_keys(id, m)
-- The state it left, which its record no longer says (a scheduled job's
-- due time is gone with it): `from scheduled`.
emit(K.events, 'dead', QUEUE, now, 'id', id, 'name', m[M.name], 'error', err,
  'attempts', m[M.attempts], 'detail', 'from ' .. state)
-- The next job behind its ordering key may be ready now.
if m[M.ordering_key] ~= '' then wake_workers(QUEUE) end
return { 1, state, bound_dead(now) }
