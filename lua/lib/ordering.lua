-- lib/ordering.lua: ordering keys (one job at a time per key, in seq order)
-- and what a job holds while it lives: entering a queue behind the holder of
-- its ordering key, and, once it leaves for good, handing that key on and
-- freeing its dedup key.
-- include: check keys job_record job_store waiting notify

local function pad16(n)
  return string.format('%016d', n)
end

-- Enter a job into its queue, respecting its ordering key: while another job
-- holds the key, this one waits in ord:blocked (FIFO by seq). Returns true
-- when the job is due now (so the caller wakes idle workers).
local function admit(id, m, due, now)
  local key = m[M.ordering_key]
  if key ~= '' then
    local holder = redis.call('HGET', K.ord_active, key)
    if holder and holder ~= id and redis.call('HEXISTS', K.jobs, holder) == 1 then
      redis.call('ZADD', K.ord_blocked, 0, key .. '\n' .. pad16(m[M.seq]) .. '\n' .. id)
      redis.call('HINCRBY', K.ord_blocked_n, m[M.queue], 1)
      return false
    end
    redis.call('HSET', K.ord_active, key, id)
  end
  return place(id, m, due, now)
end

-- A job left for good (completed or dead): free its dedup key (unless the key
-- lives on for a TTL) and hand its ordering key to the next job queued behind
-- it, in whatever queue that job is. The successor goes to ord:ready, which
-- its own queue's claim drains (lib/promote.lua), so this script only touches
-- declared keys.
local function release_keys(id, m)
  local dk, key = m[M.dedup_key], m[M.ordering_key]
  -- ack.lua's variant plain lacks these keys and reads them as false: a job
  -- holding one is refused there, before that call's first write (every
  -- script that has them declared pays one compare).
  if not K.dedup and (dk ~= '' or key ~= '') then
    variant_refused('ack', 'a job holding a dedup or ordering key (job ' .. id .. ')')
  end
  if dk ~= '' and m[M.dedup_ttl] == 0 and redis.call('HGET', K.dedup, dk) == id then
    redis.call('HDEL', K.dedup, dk)
  end
  if key == '' or redis.call('HGET', K.ord_active, key) ~= id then return end
  local next_members = redis.call('ZRANGEBYLEX', K.ord_blocked,
    '[' .. key .. '\n', '(' .. key .. '\11', 'LIMIT', 0, 1)
  local member = next_members[1]
  if not member then
    redis.call('HDEL', K.ord_active, key)
    return
  end
  redis.call('ZREM', K.ord_blocked, member)
  local next_id = string.sub(member, #key + 19)
  local nm = load_meta(next_id)
  if not nm then
    redis.call('HDEL', K.ord_active, key)
    return
  end
  redis.call('HSET', K.ord_active, key, next_id)
  local next_queue = nm[M.queue]
  if redis.call('HINCRBY', K.ord_blocked_n, next_queue, -1) <= 0 then
    redis.call('HDEL', K.ord_blocked_n, next_queue)
  end
  redis.call('ZADD', K.ord_ready, 0, next_queue .. '\n' .. pad16(nm[M.seq]) .. '\n' .. next_id)
  wake_workers(next_queue)
end
