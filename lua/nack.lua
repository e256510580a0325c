#!lua flags=allow-oom
-- nack.lua: a leased job failed; retry it after a delay or dead-letter it
-- (seed op Nack).
--
-- allow-oom: failures must be recorded and dead-lettered when Redis is full.
-- Dead-letters when forced, when max_attempts failed tries are reached, or
-- when enqueued_at + retry_window has passed. A dead letter releases the
-- job's dedup and ordering keys and is announced on {ns}:events. The lease's
-- end frees its limit key's slot (lib/retry.lua, lib/flow.lua).
-- A dead letter of a queue that keeps finished jobs is also told to waiters
-- (RedisQueue::wait_for): its id is published on the wake-up channel ..
-- ':finished', as an ack publishes what it completed. Only a dead letter
-- reads the queue's retention policy (one HGET): a retry reads nothing more.
-- A dead letter also reads the queue's dead-letter bound (one HGET), and in
-- a queue with one deletes the oldest dead letters past it, at most 100
-- (lib/dead_bound.lua, a `purged` event).
-- include: check clock keys job_store lease retry kept notes retention_spec dead_bound
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  kept, tombstones (only when the job is gone), logs (with log lines),
--          retention (only when the job goes dead: its policy and dead-letter bound)
--          limits, lim_starts, fifo (flow control, lib/flow.lua)
--   writes progress and logs (with notes), jobs, leased, waiting, scheduled, dead, stats, events, dedup, ord_active,
--          ord_blocked, ord_ready, ord_blocked_n, lim, lim_held, lim_ready, lim_wake
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] job id       ARGV[4] lease id (0 = whatever lease is current)
-- ARGV[5] delay_ms before the retry      ARGV[6] error text (cut to 4096 bytes)
-- ARGV[7] 1 to dead-letter now, 0 to retry when attempts allow
-- ARGV[8], ARGV[9] (optional, both or neither) the holder's last notes
--   (lib/notes.lua): progress and log lines, as ARGV[5] and ARGV[6] of
--   note.lua; kept through the retry or the dead-letter
-- Reply: { code, attempts, dead (0/1), due_ms }
-- code 1 applied: the failure is recorded; the job retries at due_ms or is dead
-- code 2 already_recorded: this lease's failure was recorded by an earlier send; nothing changed
--   (due_ms is the retry's due time that send set)
-- code -1 lease_lost: the job is not held under this lease; nothing changed
-- code -2 cancelled: an operator cancelled the job (cancel.lua); nothing changed
queue_name(QUEUE)
local id = text(ARGV[3], 'job id', 64)
local lease = uint(ARGV[4], 'lease id', 9007199254740991)
local delay = uint(ARGV[5], 'delay_ms', MAX_MS)
local err = ARGV[6]
if type(err) ~= 'string' then fail('error text is missing') end
local force = uint(ARGV[7], 'dead-letter flag', 1) == 1
local progress, lines = ARGV[8] or '', ARGV[9] or ''
check_notes(progress, lines)
local m = load_meta(id)
if not m and finished_as(id) == 'cancelled' then return { -2, 0, 0, 0 } end
if not m or m[M.queue] ~= QUEUE then return { -1, 0, 0, 0 } end
if lease ~= 0 and m[M.resolved_lease] == lease then
  -- The due time the earlier send set, so that a resend reports the
  -- retry the first one scheduled, not one due at once.
  local dead = m[M.died_at] > 0
  return { 2, m[M.attempts], dead and 1 or 0, dead and 0 or m[M.not_before] }
end
if not lease_matches(m, lease) then return { -1, m[M.attempts], 0, 0 } end
local now = now_ms()
write_notes(id, m, progress, lines)
local dead, due = fail_attempt(id, m, now, err, force, delay, m[M.lease_id])
if dead then
  if retention_policy() then redis.call('PUBLISH', CHANNEL .. ':finished', id) end
  bound_dead(now)
end
return { 1, m[M.attempts], dead and 1 or 0, due }
