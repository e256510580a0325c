#!lua flags=no-writes,allow-oom
-- list_jobs.lua: one page of a queue's jobs in one state.
-- waiting: claim order; scheduled: soonest due first; leased: soonest expiry
-- first; dead: newest first; held (lib/flow.lua): by limit key, then claim order;
-- awaiting (waiting on a gate, lib/gate.lua): by id, which is creation order
-- for the driver's ids. Blocked jobs are listed by list_blocked.lua.
-- Waiting includes the ordering successors a holder's end released
-- (ord:ready): they enter the claim order at the next claim, so until then
-- they are listed after the other waiting jobs, in seq order, as counts.lua
-- counts them. A waiter its gate fired is there too until a claim decides
-- it; it is awaiting (counted and listed there), so it is left out here.
-- include: check clock keys job_record waiting listed_job gate
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  jobs, detached, fifo, waiting, scheduled, leased, dead, lim_held, wf_awaiting, wf_awaiting_n,
--          ord_ready
--   writes nothing
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] state (waiting | scheduled | leased | dead | held | awaiting)
-- ARGV[4] offset       ARGV[5] count (1..1000)
-- Reply: { total, now_ms, id1, score1, meta1, payload1, ... }
-- A waiting or held job's score is its claim-order score, (255 - priority) * 2^44 + seq;
-- an awaiting job's is 0.
queue_name(QUEUE)
local state = ARGV[3]
local offset = uint(ARGV[4], 'offset', MAX_U32)
local count = uint(ARGV[5], 'count', 1000)
local key = ({ waiting = K.waiting, scheduled = K.scheduled, leased = K.leased, dead = K.dead,
  held = K.lim_held, awaiting = K.wf_awaiting })[state]
if not key then fail('state must be one of waiting, scheduled, leased, dead, held, awaiting; got ' .. tostring(state)) end

-- The claim-order score of the fifo job at index i (0-based).
local function fifo_score_at(i)
  local id = redis.call('LINDEX', K.fifo, i)
  local raw = id and redis.call('HGET', K.jobs, id)
  if not raw then return -1 end
  return FIFO_BASE + split_record(raw)[M.seq]
end

-- The waiting zset's priority-0 part (ranks p onwards) and the fifo list are
-- both in seq order; a page of their merge starting at merged position r
-- takes `a` zset jobs and r - a fifo jobs before it. Binary search for a:
-- the largest a whose a-th zset job still comes before the fifo job at r - a.
local function merged_split(p, z0, fifo_len, r)
  local lo, hi = math.max(0, r - fifo_len), math.min(z0, r)
  while lo < hi do
    local mid = math.ceil((lo + hi) / 2)
    local z = redis.call('ZRANGE', K.waiting, p + mid - 1, p + mid - 1, 'WITHSCORES')
    if r - mid >= fifo_len or tonumber(z[2]) < fifo_score_at(r - mid) then lo = mid else hi = mid - 1 end
  end
  return lo
end

-- Up to `n` waiting jobs in claim order from position `at`: a flat list of
-- id, score pairs.
local function waiting_page(at, n)
  local p = redis.call('ZCOUNT', K.waiting, '-inf', '(' .. string.format('%d', FIFO_BASE))
  local z0 = redis.call('ZCARD', K.waiting) - p
  local fifo_len = redis.call('LLEN', K.fifo)
  local page = {}
  if at < p then
    page = redis.call('ZRANGE', K.waiting, at, math.min(p, at + n) - 1, 'WITHSCORES')
  end
  n = n - #page / 2
  if n <= 0 then return page end
  local r = math.max(0, at - p)
  local a = merged_split(p, z0, fifo_len, r)
  local zset = redis.call('ZRANGE', K.waiting, p + a, p + a + n - 1, 'WITHSCORES')
  local fifo = redis.call('LRANGE', K.fifo, r - a, r - a + n - 1)
  local records = #fifo > 0 and redis.call('HMGET', K.jobs, unpack(fifo)) or {}
  local z, f = 1, 1
  while n > 0 and (zset[z] or fifo[f]) do
    local fifo_score = fifo[f] and (records[f] and FIFO_BASE + split_record(records[f])[M.seq] or -1)
    if fifo_score and (not zset[z] or fifo_score < tonumber(zset[z + 1])) then
      page[#page + 1] = fifo[f]
      page[#page + 1] = string.format('%d', fifo_score)
      f = f + 1
    else
      page[#page + 1] = zset[z]
      page[#page + 1] = zset[z + 1]
      z = z + 2
    end
    n = n - 1
  end
  return page
end

-- This queue's released successors in ord:ready (lex range of its members).
local READY_FROM, READY_TO = '[' .. QUEUE .. '\n', '(' .. QUEUE .. '\11'

-- How many of them are waiting: all but the fired waiters (wf_awaiting_n's
-- fired field, lib/gate.lua count_fired), which are awaiting.
local function ready_count()
  local fired = tonumber(redis.call('HGET', K.wf_awaiting_n, wf.fired_field(QUEUE)) or '0')
  return redis.call('ZLEXCOUNT', K.ord_ready, READY_FROM, READY_TO) - fired
end

-- Up to `n` released successors from position `at` among them, as id, score
-- pairs with their claim-order score; a fired waiter (in wf:awaiting) is
-- skipped, so a page may come out short while one is there.
local function ready_page(at, n)
  local page = {}
  for _, member in ipairs(redis.call('ZRANGEBYLEX', K.ord_ready, READY_FROM, READY_TO, 'LIMIT', at, n)) do
    local id = string.sub(member, #QUEUE + 19)
    local raw = redis.call('HGET', K.jobs, id)
    if raw and not redis.call('ZSCORE', K.wf_awaiting, QUEUE .. '\n' .. id) then
      page[#page + 1] = id
      page[#page + 1] = string.format('%d', waiting_score(split_record(raw)))
    end
  end
  return page
end

local total
if state == 'awaiting' then
  -- wf:awaiting holds every queue's: this queue's count is kept apart.
  total = tonumber(redis.call('HGET', K.wf_awaiting_n, QUEUE) or '0')
else
  total = redis.call('ZCARD', key)
  if state == 'waiting' then total = total + redis.call('LLEN', K.fifo) end
end
-- The waiting jobs before the released successors.
local placed = total
if state == 'waiting' then total = total + ready_count() end
local reply = { total, now_ms() }
if count == 0 then return reply end
local page
if state == 'waiting' then
  page = offset < placed and waiting_page(offset, count) or {}
  local more = count - #page / 2
  if more > 0 then
    for _, v in ipairs(ready_page(math.max(0, offset - placed), more)) do page[#page + 1] = v end
  end
elseif state == 'held' then
  -- Members "key\nscore16\nid" in rank order: id and score out of each.
  page = {}
  for _, member in ipairs(redis.call('ZRANGE', key, offset, offset + count - 1)) do
    local score, id = string.match(member, '\n(%d+)\n(.*)$')
    page[#page + 1] = id
    page[#page + 1] = string.format('%d', tonumber(score))
  end
elseif state == 'awaiting' then
  -- Members "queue\nid" of this queue, from its part of the lex order.
  page = {}
  for _, member in ipairs(redis.call('ZRANGEBYLEX', key, '[' .. QUEUE .. '\n', '(' .. QUEUE .. '\11',
      'LIMIT', offset, count)) do
    page[#page + 1] = string.sub(member, #QUEUE + 2)
    page[#page + 1] = '0'
  end
elseif state == 'dead' then
  page = redis.call('ZREVRANGE', key, offset, offset + count - 1, 'WITHSCORES')
else
  page = redis.call('ZRANGE', key, offset, offset + count - 1, 'WITHSCORES')
end
for i = 1, #page, 2 do
  append_listed(reply, page[i], page[i + 1], redis.call('HGET', K.jobs, page[i]))
end
return reply
