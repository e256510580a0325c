#!lua flags=allow-oom
-- ack.lua: a leased job is done; remove it for good (seed op Ack).
--
-- allow-oom: acknowledging frees memory and must work when Redis is full.
-- KEYS: the common queue key list (lua/lib.lua).
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] job id       ARGV[4] lease id (0 = whatever lease is current)
-- Reply: 1 acknowledged; 0 the job no longer exists (a repeated ack: harmless);
--        -1 lease lost: the job is not held under this lease, nothing changed.
queue_name(QUEUE)
local id = text(ARGV[3], 'job id', 64)
local lease = uint(ARGV[4], 'lease id', 9007199254740991)
local m = load_meta(id)
if not m then return 0 end
if m[M.queue] ~= QUEUE or not lease_matches(m, lease) then return -1 end
local now = now_ms()
redis.call('ZREM', K.leased, id)
redis.call('HDEL', K.jobs, id)
redis.call('HDEL', K.payloads, id)
release_keys(id, m)
bump_stats('p', now)
return 1
