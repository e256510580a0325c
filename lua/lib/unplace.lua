-- lib/unplace.lua: take a live job of this queue out of the structure its
-- state keeps it in, for the by-id surgery scripts that end a job's wait
-- (delete_job, dead_letter_job): one definition of where each state's job
-- sits, beside lib/job_state.lua's state_of that finds it.
-- include: keys job_record ordering waiting flow

-- Take job `id` (record `m`) out of where it waits: `state` and `where` as
-- state_of (lib/job_state.lua) says, `where` 'popped' when the caller has
-- popped it from the head of the queue already. Leased and dead jobs are
-- their callers' (a lease to void, a dead letter's set): not here. A held
-- job leaves its key's held set (the caller settles its keys: settle_keys);
-- a blocked one its place behind its key's holder; an awaiting one the
-- ready index its gate may have fired it into.
local function unplace(id, m, state, where)
  if state == 'held' then
    unhold(id, m[M.limit_key], waiting_score(m))
  elseif state == 'scheduled' then
    redis.call('ZREM', K.scheduled, id)
  elseif state == 'awaiting' then
    redis.call('ZREM', K.ord_ready, QUEUE .. '\n' .. pad16(m[M.seq]) .. '\n' .. id)
  elseif state == 'blocked' then
    local member = m[M.ordering_key] .. '\n' .. pad16(m[M.seq]) .. '\n' .. id
    if redis.call('ZREM', K.ord_blocked, member) == 1 and
        redis.call('HINCRBY', K.ord_blocked_n, QUEUE, -1) <= 0 then
      redis.call('HDEL', K.ord_blocked_n, QUEUE)
    end
  elseif where == 'zset' then
    redis.call('ZREM', K.waiting, id)
  elseif where == 'fifo' then
    -- O(the job's position in the list): Redis scans from the head.
    redis.call('LREM', K.fifo, 1, id)
  elseif where == 'ready' then
    redis.call('ZREM', K.ord_ready, QUEUE .. '\n' .. pad16(m[M.seq]) .. '\n' .. id)
  end
end
