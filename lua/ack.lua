#!lua flags=allow-oom
-- ack.lua: leased jobs are done; remove them for good (seed op Ack).
--
-- Takes a batch so a busy worker acknowledges many jobs in one call; each
-- job is still fenced by its own lease id.
-- allow-oom: acknowledging frees memory and must work when Redis is full.
-- include: check clock keys job_record lease ordering stats
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  jobs, dedup, ord_active, ord_blocked
--   writes jobs, leased, stats, dedup, ord_active, ord_blocked, ord_ready, ord_blocked_n
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] n (1..1000), then n pairs: job id, lease id (0 = whatever lease is current)
-- Reply: one code per job, in order:
-- code 1 acknowledged: the job is done and removed
-- code 0 already_gone: the job no longer exists (a repeated ack: harmless)
-- code -1 lease_lost: the job is not held under this lease; nothing changed for it
queue_name(QUEUE)
local n = uint(ARGV[3], 'ack count', 1000)
if #ARGV ~= 3 + 2 * n then fail('expected ' .. (3 + 2 * n) .. ' arguments, got ' .. #ARGV) end
-- An empty batch acknowledges nothing (and HMGET needs at least one field).
if n == 0 then return {} end
local ids, leases = {}, {}
for i = 1, n do
  ids[i] = text(ARGV[2 + 2 * i], 'job id', 64)
  leases[i] = uint(ARGV[3 + 2 * i], 'lease id', 9007199254740991)
end
-- One HMGET for the batch: each redis.call costs about a microsecond before
-- the command does anything.
local metas = redis.call('HMGET', K.jobs, unpack(ids))
local codes, done, acked = {}, {}, {}
for i = 1, n do
  local id, raw = ids[i], metas[i]
  if not raw or acked[id] then
    -- Gone, or listed twice in this batch and already acknowledged above.
    codes[i] = 0
  else
    local m = record_head(raw)
    if m[M.queue] ~= QUEUE or not lease_matches(m, leases[i]) then
      codes[i] = -1
    else
      codes[i] = 1
      acked[id] = true
      release_keys(id, m)
      done[#done + 1] = id
    end
  end
end
if #done > 0 then
  redis.call('HDEL', K.jobs, unpack(done))
  redis.call('ZREM', K.leased, unpack(done))
  bump_stats('p', now_ms(), #done)
end
return codes
