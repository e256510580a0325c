#!lua flags=allow-oom
-- extend.lua: push a held lease's expiry to now + lease_ms (a heartbeat).
--
-- An expired lease that nobody reclaimed yet can still be extended: no other
-- worker holds the job. Once reclaimed or re-leased, the old token is refused.
-- The holder's buffered notes (progress, log lines: lib/notes.lua) ride along,
-- fenced by the same check.
-- include: check clock keys job_store lease kept notes
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  kept, tombstones (only when the job is gone), logs (with log lines)
--   writes jobs, leased, progress and logs (with notes)
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] job id       ARGV[4] lease id (0 = whatever lease is current)
-- ARGV[5] lease_ms (1..MAX_MS)
-- ARGV[6], ARGV[7] (optional, both or neither) progress and log lines, as
--   ARGV[5] and ARGV[6] of note.lua
-- Reply: { code, expiry_ms }
-- code 1 extended: the lease now lapses at expiry_ms
-- code -1 lease_lost: the job is not held under this lease; nothing changed
-- code -2 cancelled: an operator cancelled the job (cancel.lua); nothing changed
queue_name(QUEUE)
local id = text(ARGV[3], 'job id', 64)
local lease = uint(ARGV[4], 'lease id', 9007199254740991)
local lease_ms = uint(ARGV[5], 'lease_ms', MAX_MS)
if lease_ms < 1 then fail('lease_ms must be at least 1') end
local progress, lines = ARGV[6] or '', ARGV[7] or ''
check_notes(progress, lines)
local m = load_meta(id)
if not m and finished_as(id) == 'cancelled' then return { -2, 0 } end
if not m or m[M.queue] ~= QUEUE or not lease_matches(m, lease) then return { -1, 0 } end
local expiry = now_ms() + lease_ms
write_notes(id, m, progress, lines)
m[M.lease_expiry] = expiry
store_meta(id, m)
redis.call('ZADD', K.leased, expiry, id)
return { 1, expiry }
