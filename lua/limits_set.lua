#!lua
-- limits_set.lua: set, change or clear one limit of a queue, live (lib/flow.lua).
--
-- scope queue: the queue-wide limit (all of Q's jobs); each_key: the default
-- for every limit key of Q; key: the override for limit key K of Q, which
-- replaces the each-key default for K entirely. All zeros clear the scope
-- (key scope: the override is deleted). Setting any scope makes the queue
-- flow-aware; its limits field is never deleted (clearing writes zeros), so
-- its counts stay exact.
-- A raised limit takes effect at once: up to 1000 of Q's keys with held
-- jobs are put due for a re-check now (K.lim_wake), from an HSCAN of K.lim;
-- while the reply's cursor is not "0", limits_wake.lua puts the rest.
-- Idle workers are woken when anything changed.
-- include: check clock keys flow_spec events notify
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  limits, lim
--   writes limits, lim_wake, events
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] scope: queue | each_key | key
-- ARGV[4] limit key (1..512 bytes, no control characters) for scope key, else ""
-- ARGV[5] concurrency (0 = none, else 1..1000000)
-- ARGV[6] rate max (0 = none, else 1..100000)
-- ARGV[7] rate per_ms (0 exactly when rate max is 0, else 1..86400000)
-- last ARGV, optional: the operator's actor, marked (lib/events.lua: ARGC leaves it out)
-- Reply: { code, cursor } with cursor the HSCAN cursor for limits_wake.lua ("0" = done)
-- code 1 set: the limit is now the given one
-- code 0 unchanged: the same limit was already set; nothing written
local WAKE_SCAN = 1000
queue_name(QUEUE)
local scope = ARGV[3]
if scope ~= 'queue' and scope ~= 'each_key' and scope ~= 'key' then
  fail('scope must be queue, each_key or key, got ' .. string.format('%q', tostring(scope)))
end
local key = text(ARGV[4], 'limit key', 512)
if scope == 'key' and key == '' then fail('a limit key must be 1 to 512 bytes without control characters') end
if scope ~= 'key' and key ~= '' then fail('a limit key is for scope key only') end
local concurrency = uint(ARGV[5], 'concurrency', 1000000)
local rate_max = uint(ARGV[6], 'rate max', 100000)
local per = uint(ARGV[7], 'rate interval', 86400000)
if (rate_max == 0) ~= (per == 0) then
  if rate_max == 0 then fail('a rate interval needs a rate max of 1 to 100000, got 0') end
  fail('rate interval must be 1 ms to 24 h, got 0 ms')
end
local part = string.format('%d %d %d', concurrency, rate_max, per)
local clear = concurrency == 0 and rate_max == 0

local current = redis.call('HGET', K.limits, QUEUE)
local changed = false
if scope == 'key' then
  local field = QUEUE .. '\n' .. key
  local existing = redis.call('HGET', K.limits, field)
  if clear then
    changed = existing ~= false and existing ~= nil
    if changed then redis.call('HDEL', K.limits, field) end
  elseif existing ~= part then
    changed = true
    redis.call('HSET', K.limits, field, part)
    if not current then redis.call('HSET', K.limits, QUEUE, FLOW_ZEROS) end
  end
else
  local q, e = '0 0 0', '0 0 0'
  if current then
    q, e = string.match(current, '^(%d+ %d+ %d+) (%d+ %d+ %d+)$')
    if not q then q, e = '0 0 0', '0 0 0' end
  end
  if scope == 'queue' then q = part else e = part end
  local spec = q .. ' ' .. e
  -- Clearing a queue that never had limits writes nothing.
  if spec ~= current and not (clear and not current) then
    changed = true
    redis.call('HSET', K.limits, QUEUE, spec)
  end
end
if not changed then return { 0, '0' } end

local now = now_ms()
local scope_words = scope == 'key' and ('key ' .. key) or scope
if clear then
  emit(K.events, 'limit_cleared', QUEUE, now, 'detail', scope_words)
else
  -- Only the bounds set: a "rate 0 per 0 ms" beside a concurrency read as
  -- "nothing may start", where 0 means no rate bound at all.
  local bounds = {}
  if concurrency > 0 then bounds[#bounds + 1] = string.format('concurrency %d', concurrency) end
  if rate_max > 0 then bounds[#bounds + 1] = string.format('rate %d per %d ms', rate_max, per) end
  if #bounds == 0 then bounds[1] = 'no limit' end
  emit(K.events, 'limit_set', QUEUE, now, 'detail', scope_words .. ': ' .. table.concat(bounds, ', '))
end
local scan = redis.call('HSCAN', K.lim, '0', 'MATCH', 'h\n*', 'COUNT', WAKE_SCAN)
for i = 1, #scan[2], 2 do
  redis.call('ZADD', K.lim_wake, now, string.sub(scan[2][i], 3))
end
wake_workers(QUEUE)
return { 1, scan[1] }
