#!lua flags=no-writes,allow-oom
-- kept_get.lua: what became of a job, read atomically: still live, kept
-- (completed or cancelled, with its kept record), a tombstone, or nothing.
-- include: check
-- KEYS[1] {ns}:jobs         hash  id -> job record        (read)
-- KEYS[2] {ns}:kept         hash  id -> kept record       (read)
-- KEYS[3] {ns}:tombstones   hash  id -> tombstone         (read)
-- ARGV[1] job id
-- Reply: { 'live' } | { 'kept', kept record (lib/kept_record.lua) }
--        | { 'tombstone', "<c|x> <ms>" } | { 'unknown' }
local id = text(ARGV[1], 'job id', 64)
if redis.call('HEXISTS', KEYS[1], id) == 1 then return { 'live' } end
local raw = redis.call('HGET', KEYS[2], id)
if raw then return { 'kept', raw } end
raw = redis.call('HGET', KEYS[3], id)
if raw then return { 'tombstone', raw } end
return { 'unknown' }
