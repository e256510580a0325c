-- lib/stats.lua: the per-queue throughput counters the console charts.
-- include: keys

local STATS_BUCKET_MS = 5000
local STATS_KEEP_BUCKETS = 200       -- 1000 s: the console charts 15 minutes

-- Count a processed ('p') or failed ('f') job in the current time bucket.
-- Old buckets are dropped when a new bucket starts, so the hash stays bounded
-- (at most 2 * STATS_KEEP_BUCKETS fields), and the key expires when idle.
local function bump_stats(kind, now, count)
  local bucket = math.floor(now / STATS_BUCKET_MS)
  count = count or 1
  if redis.call('HINCRBY', K.stats, kind .. bucket, count) == count then
    redis.call('PEXPIRE', K.stats, STATS_BUCKET_MS * STATS_KEEP_BUCKETS)
    local oldest = bucket - STATS_KEEP_BUCKETS
    for _, field in ipairs(redis.call('HKEYS', K.stats)) do
      local b = tonumber(string.sub(field, 2))
      if b and b < oldest then redis.call('HDEL', K.stats, field) end
    end
  end
end
