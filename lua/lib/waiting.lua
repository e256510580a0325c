-- lib/waiting.lua: the claim order of a queue's waiting jobs.
--
-- Waiting jobs live in two places, whose merge by score is the claim order:
-- a job enqueued due now, with priority 0 and no ordering key (the common
-- case) is appended to the fifo list (K.fifo), about 30 bytes a job where a
-- zset entry costs about 120; every other waiting job (a priority, an
-- ordering key, or a re-entry after a delay, retry, reclaim or requeue) is in
-- the waiting zset (K.waiting). Only enqueue.lua appends to fifo, and seq
-- grows with each enqueue, so the list stays sorted by seq and a fifo job's
-- score is FIFO_BASE + seq. A due job with a limit key is held instead, in
-- its key's held set (lib/flow.lua), at the same score.
-- include: keys job_record flow

local PRIORITY_SPAN = 17592186044416 -- 2^44: seq space per priority level
local FIFO_BASE = 255 * PRIORITY_SPAN -- waiting score of priority 0 at seq 0

local function waiting_score(m)
  return (255 - m[M.priority]) * PRIORITY_SPAN + m[M.seq]
end

-- Make a job due at `due`: waiting when due now (held by its limit key when
-- it has one), scheduled otherwise. Returns true when it may be claimed now
-- (so the caller wakes idle workers).
local function place(id, m, due, now)
  if due > now then
    redis.call('ZADD', K.scheduled, due, id)
    return false
  end
  if m[M.limit_key] ~= '' then return hold(id, m[M.limit_key], waiting_score(m), now) end
  redis.call('ZADD', K.waiting, waiting_score(m), id)
  return true
end

-- How many jobs wait in the queue's two waiting structures.
local function waiting_count()
  return redis.call('ZCARD', K.waiting) + redis.call('LLEN', K.fifo)
end

-- Whether any job waits: one EXISTS of both structures, since Redis deletes
-- a list or sorted set when its last member goes (one call instead of
-- waiting_count's two: about 1.5k instructions of every hand-off).
local function any_waiting()
  return redis.call('EXISTS', K.waiting, K.fifo) > 0
end

-- Take up to `limit` waiting jobs off the queue in claim order (priority,
-- then seq): the merge of the waiting zset and the fifo list. Returns ids.
local function pop_waiting(limit)
  if redis.call('ZCARD', K.waiting) == 0 then
    return redis.call('LPOP', K.fifo, limit) or {}
  end
  local fifo = redis.call('LRANGE', K.fifo, 0, limit - 1)
  if #fifo == 0 then
    local popped = redis.call('ZPOPMIN', K.waiting, limit)
    local ids = {}
    for i = 1, #popped / 2 do ids[i] = popped[i * 2 - 1] end
    return ids
  end
  -- Both hold jobs: merge by score. A fifo job whose record is missing
  -- scores lowest, so it is popped and dropped like a dangling zset member.
  local zset = redis.call('ZRANGE', K.waiting, 0, limit - 1, 'WITHSCORES')
  local records = redis.call('HMGET', K.jobs, unpack(fifo))
  local ids, z, f = {}, 1, 1
  while #ids < limit and (zset[z] or fifo[f]) do
    local take_fifo = fifo[f] ~= nil
    if take_fifo and zset[z] then
      local raw = records[f]
      local fifo_score = raw and FIFO_BASE + split_record(raw)[M.seq] or -1
      take_fifo = fifo_score < tonumber(zset[z + 1])
    end
    if take_fifo then
      ids[#ids + 1] = fifo[f]
      f = f + 1
    else
      ids[#ids + 1] = zset[z]
      z = z + 2
    end
  end
  if z > 1 then redis.call('ZREMRANGEBYRANK', K.waiting, 0, (z - 1) / 2 - 1) end
  if f > 1 then redis.call('LTRIM', K.fifo, f - 1, -1) end
  return ids
end
