#!lua flags=no-writes,allow-oom
-- kept_get.lua: what became of a job, read atomically: still live, kept
-- (completed or cancelled, with its kept record), a tombstone, or nothing.
-- A kept job past its queue's age bound reads as the tombstone the queue's
-- next trim leaves of it, and a tombstone past its own age as nothing, on
-- Redis's clock now (lib/kept_record.lua kept_expired): a quiet queue, whose
-- trim has not run, answers as if it had. Reads only (a read-only
-- operator's ACL may forbid writes); the trim frees the memory.
-- include: check clock kept_record
-- KEYS[1] {ns}:jobs           hash  id -> job record        (read)
-- KEYS[2] {ns}:kept           hash  id -> kept record       (read)
-- KEYS[3] {ns}:tombstones     hash  id -> tombstone         (read)
-- KEYS[4] {ns}:tombstones:at  zset  id -> when its tombstone expires (read)
-- KEYS[5] {ns}:retention      hash  queue -> its retention policy (read)
--   (these last two are read only when given: a caller sending the first
--   three reads kept jobs and tombstones however old)
-- ARGV[1] job id
-- Reply: { code } or { code, what was found }
-- code 1 live: the job is still live (not finished)
-- code 2 kept: { 2, its kept record (lib/kept_record.lua) }
-- code 3 tombstone: { 3, its tombstone "<c|x> <ms>" }
-- code 0 unknown: no job, kept record or tombstone with this id
local id = text(ARGV[1], 'job id', 64)
local TOMBSTONES_AT, RETENTION = KEYS[4], KEYS[5]
if redis.call('HEXISTS', KEYS[1], id) == 1 then return { 1 } end
local raw = redis.call('HGET', KEYS[2], id)
if raw then
  if not RETENTION then return { 2, raw } end
  local k = decode_kept(raw)
  local at = k[KR.finished_at]
  local policy = retention_read(redis.call('HGET', RETENTION, k[KR.queue]))
  local now = now_ms()
  if not kept_expired(at, policy, now) then return { 2, raw } end
  if aged_tombstone_expiry(at, policy) > now then
    return { 3, tombstone_value(k[KR.outcome], at) }
  end
  return { 0 }
end
raw = redis.call('HGET', KEYS[3], id)
if not raw then return { 0 } end
if TOMBSTONES_AT then
  local expiry = tonumber(redis.call('ZSCORE', TOMBSTONES_AT, id))
  if expiry and expiry <= now_ms() then return { 0 } end
end
return { 3, raw }
