#!lua flags=no-writes,allow-oom
-- kept_get.lua: what became of a job, read atomically: still live, kept
-- (completed or cancelled, with its kept record), a tombstone, or nothing.
-- include: check
-- KEYS[1] {ns}:jobs         hash  id -> job record        (read)
-- KEYS[2] {ns}:kept         hash  id -> kept record       (read)
-- KEYS[3] {ns}:tombstones   hash  id -> tombstone         (read)
-- ARGV[1] job id
-- Reply: { code } or { code, what was found }
-- code 1 live: the job is still live (not finished)
-- code 2 kept: { 2, its kept record (lib/kept_record.lua) }
-- code 3 tombstone: { 3, its tombstone "<c|x> <ms>" }
-- code 0 unknown: no job, kept record or tombstone with this id
local id = text(ARGV[1], 'job id', 64)
if redis.call('HEXISTS', KEYS[1], id) == 1 then return { 1 } end
local raw = redis.call('HGET', KEYS[2], id)
if raw then return { 2, raw } end
raw = redis.call('HGET', KEYS[3], id)
if raw then return { 3, raw } end
return { 0 }
