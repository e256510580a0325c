-- lib/stats.lua: the per-queue throughput counters the console charts.
-- include: keys

local STATS_BUCKET_MS = 5000
local STATS_KEEP_BUCKETS = 200       -- 1000 s: the console charts 15 minutes

-- Count a processed ('p') or failed ('f') job in the current time bucket.
-- Old buckets are dropped when a new bucket starts, so the hash stays bounded
-- (at most 2 * STATS_KEEP_BUCKETS fields), and the key expires when idle.
--
-- A field's name is kept for its bucket: `kind .. bucket` formats the number
-- (%.14g, about 3k instructions) at every call, and a function library
-- keeps the names from one call to the next (a bucket lasts 5 s). A count
-- of one goes to Redis as the text '1' (why: EVENTS_MAXLEN in
-- lib/events.lua).
-- composed memo: stats_fields (a cache of the field names of the last bucket counted)
local stats_fields
local function bump_stats(kind, now, count)
  local bucket = math.floor(now / STATS_BUCKET_MS)
  local fields = stats_fields
  if not fields or fields.bucket ~= bucket then
    fields = { bucket = bucket, p = 'p' .. bucket, f = 'f' .. bucket }
    stats_fields = fields
  end
  count = count or 1
  if redis.call('HINCRBY', K.stats, fields[kind], count == 1 and '1' or count) == count then
    redis.call('PEXPIRE', K.stats, STATS_BUCKET_MS * STATS_KEEP_BUCKETS)
    local oldest = bucket - STATS_KEEP_BUCKETS
    for _, field in ipairs(redis.call('HKEYS', K.stats)) do
      local b = tonumber(string.sub(field, 2))
      if b and b < oldest then redis.call('HDEL', K.stats, field) end
    end
  end
end
