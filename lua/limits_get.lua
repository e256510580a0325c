#!lua flags=no-writes,allow-oom
-- limits_get.lua: a queue's limits and their use now, one page of its keys
-- at a time (lib/flow.lua).
--
-- Keys come from an HSCAN of K.lim (every key with leased jobs, held jobs or
-- a push-back) from `cursor`, plus, on the first page (cursor "0"), every
-- override of Q in K.limits. A key appears once a page; across pages it may
-- appear again (HSCAN may return its fields on two pages, or an override's
-- key also has state): the caller merges by key (the values are read at
-- the same moment within a page).
-- With ARGV[5], the page is that one key alone (whatever its state), and no
-- scan: what a job's detail reads to say why it is held.
-- include: check clock keys waiting flow
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  limits, lim, lim_starts, lim_ready, leased, waiting, fifo, paused
--   writes nothing
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] cursor ("0" to start)   ARGV[4] count (1..1000): an HSCAN COUNT hint
-- ARGV[5] (optional) one limit key: read only it
-- Reply: { now, queue_spec, queue_leased, queue_started_in_window,
--   queue_pushed_back_until, each_key_spec, next_cursor, waiting, paused,
--   then 7 entries per
--   key: key, override, leased, held, started_in_window, pushed_back_until,
--   ready } where a spec is "concurrency rate_max rate_per_ms" (0 = none;
--   queue_spec and each_key_spec "" when the queue has no limits field),
--   override "" when the key has none, a pushed-back-until 0 when none or
--   past, started_in_window the starts in the key's (or the queue's) current
--   rate window (0 without a rate), ready 1 when the key has held jobs and
--   room now, else 0, next_cursor "0" when this is the last page, waiting
--   the queue's due jobs without a limit key (its waiting zset and fifo:
--   what the queue-wide limit alone holds back when it has no room), paused
--   1 when the queue is paused, else 0.
local OVERRIDE_SCAN = 1000
queue_name(QUEUE)
local cursor = decimal_u64(ARGV[3], 'cursor')
local count = uint(ARGV[4], 'count', 1000)
if count < 1 then fail('count must be 1 to 1000, got 0') end

local now = now_ms()
local spec = flow_spec()
local only = ARGV[5]
if only then text(only, 'limit key', 512) end
local reply = { now, '', redis.call('ZCARD', K.leased), 0, 0, '', '0', waiting_count(),
  redis.call('SISMEMBER', K.paused, QUEUE) }
local function pushed_until(raw)
  local at = tonumber(raw or '0')
  return at > now and at or 0
end
if spec then
  reply[2] = string.format('%d %d %d', spec.qc, spec.qr, spec.qp)
  reply[6] = string.format('%d %d %d', spec.kc, spec.kr, spec.kp)
  if spec.qr > 0 then reply[4] = starts_in_window('', spec.qp, now) end
  reply[5] = pushed_until(redis.call('HGET', K.lim, 'p\n'))
end

local keys, seen = {}, {}
local function add(key)
  if key ~= '' and not seen[key] then
    seen[key] = true
    keys[#keys + 1] = key
  end
end
if only then
  add(only)
else
  local scan = redis.call('HSCAN', K.lim, cursor, 'COUNT', count)
  reply[7] = scan[1]
  for i = 1, #scan[2], 2 do add(string.sub(scan[2][i], 3)) end
end
if cursor == '0' and not only then
  -- The overrides of Q: fields "Q\n<key>" of the namespace's limits hash.
  local pattern = string.gsub(QUEUE, '[%*%?%[%]\\]', '\\%0') .. '\n*'
  local at = '0'
  repeat
    local page = redis.call('HSCAN', K.limits, at, 'MATCH', pattern, 'COUNT', OVERRIDE_SCAN)
    at = page[1]
    for i = 1, #page[2], 2 do add(string.sub(page[2][i], #QUEUE + 2)) end
  until at == '0'
end

for _, key in ipairs(keys) do
  local leased, held, pushed = key_counts(key)
  local l = key_limit(key)
  reply[#reply + 1] = key
  reply[#reply + 1] = l.override or ''
  reply[#reply + 1] = leased
  reply[#reply + 1] = held
  reply[#reply + 1] = l.r > 0 and starts_in_window(key, l.p, now) or 0
  reply[#reply + 1] = pushed > now and pushed or 0
  reply[#reply + 1] = redis.call('ZSCORE', K.lim_ready, key) and 1 or 0
end
return reply
