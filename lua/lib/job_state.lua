-- lib/job_state.lua: where a live job of this queue is, found from its
-- record and the queue's structures (the state inspect.lua reports), for the
-- scripts that change one job by id (promote_job, delete_job, edit_job,
-- cancel). A due job with a limit key is held (lib/flow.lua); a job waiting
-- on a gate (lib/gate.lua) is awaiting.
-- include: keys job_record ordering waiting flow gate

-- The member that holds job `id` (record `m`) in its key's held set.
local function held_member_of(id, m)
  return held_member(m[M.limit_key], waiting_score(m), id)
end

-- The state of job `id`, whose record `m` says it is in this queue: one of
-- leased | dead | waiting | scheduled | held | awaiting | blocked, and for
-- waiting where it waits: 'zset' (the waiting zset), 'fifo' (the fifo list)
-- or 'ready' (a released ordering successor in ord:ready). At most seven
-- lookups (the awaiting one only for a job with a gate to wait on).
local function state_of(id, m)
  if redis.call('ZSCORE', K.leased, id) then return 'leased' end
  if redis.call('ZSCORE', K.dead, id) then return 'dead' end
  if redis.call('ZSCORE', K.waiting, id) then return 'waiting', 'zset' end
  if redis.call('ZSCORE', K.scheduled, id) then return 'scheduled' end
  if m[M.limit_key] ~= '' and redis.call('ZSCORE', K.lim_held, held_member_of(id, m)) then
    return 'held'
  end
  if wf.is_awaiting(id, m) then return 'awaiting' end
  -- Only jobs without an ordering or limit key go to the fifo list (enqueue.lua).
  if m[M.ordering_key] == '' and m[M.limit_key] == '' then return 'waiting', 'fifo' end
  if redis.call('ZSCORE', K.ord_ready, QUEUE .. '\n' .. pad16(m[M.seq]) .. '\n' .. id) then
    return 'waiting', 'ready'
  end
  return 'blocked'
end
