-- lib/job_state.lua: where a live job of this queue is, found from its
-- record and the queue's structures (the state inspect.lua reports), for the
-- scripts that change one job by id (promote_job, delete_job, edit_job).
-- include: keys job_record ordering

-- The state of job `id`, whose record `m` says it is in this queue: one of
-- leased | dead | waiting | scheduled | blocked, and for waiting where it
-- waits: 'zset' (the waiting zset), 'fifo' (the fifo list) or 'ready' (a
-- released ordering successor in ord:ready). At most five lookups.
local function state_of(id, m)
  if redis.call('ZSCORE', K.leased, id) then return 'leased' end
  if redis.call('ZSCORE', K.dead, id) then return 'dead' end
  if redis.call('ZSCORE', K.waiting, id) then return 'waiting', 'zset' end
  if redis.call('ZSCORE', K.scheduled, id) then return 'scheduled' end
  -- Only jobs without an ordering key go to the fifo list (enqueue.lua).
  if m[M.ordering_key] == '' then return 'waiting', 'fifo' end
  if redis.call('ZSCORE', K.ord_ready, QUEUE .. '\n' .. pad16(m[M.seq]) .. '\n' .. id) then
    return 'waiting', 'ready'
  end
  return 'blocked'
end
