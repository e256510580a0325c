#!lua
-- note.lua: record a held job's notes (its progress and log lines,
-- lib/notes.lua) without extending its lease: RedisQueue::note, for callers
-- that do not use the Worker (a worker's notes ride extend.lua).
--
-- Fenced like extend.lua: notes from anyone but the current holder are
-- refused and change nothing. No allow-oom: notes grow memory, so a full
-- Redis refuses them (the heartbeat's extend.lua still runs).
-- include: check keys job_store lease kept notes
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  jobs, logs, kept, tombstones (only when the job is gone)
--   writes jobs (its noted flag, once), progress, logs
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] job id       ARGV[4] lease id (0 = whatever lease is current)
-- ARGV[5] progress: JSON text, '' = unchanged (at most 4096 bytes)
-- ARGV[6] log lines, each ended by "\n", '' = none (each at most 1024 bytes)
-- Reply: { code }
-- code 1 noted: the notes are stored
-- code -1 lease_lost: the job is not held under this lease; nothing changed
-- code -2 cancelled: an operator cancelled the job (cancel.lua); nothing changed
queue_name(QUEUE)
local id = text(ARGV[3], 'job id', 64)
local lease = uint(ARGV[4], 'lease id', 9007199254740991)
check_notes(ARGV[5], ARGV[6])
local m = load_meta(id)
if not m and finished_as(id) == 'cancelled' then return { -2 } end
if not m or m[M.queue] ~= QUEUE or not lease_matches(m, lease) then return { -1 } end
local was_noted = m[M.noted] == 1
write_notes(id, m, ARGV[5], ARGV[6])
if not was_noted and m[M.noted] == 1 then store_meta(id, m) end
return { 1 }
