#!lua flags=no-writes,allow-oom
-- next_due.lua: how long until a job of this queue is due for claiming.
-- Counts waiting jobs and released ordering successors (due now), scheduled
-- jobs and retries (due at their time) and leases (due for reclaim at their
-- expiry, so an idle worker wakes to recover a crashed peer's jobs).
-- A paused queue has nothing due.
-- include: check keys due
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  paused, fifo, waiting, ord_ready, scheduled, leased
--   writes nothing
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- Reply: milliseconds until due (0 = now), or -1 when nothing is pending.
queue_name(QUEUE)
return due_in_ms()
