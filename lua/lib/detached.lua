-- lib/detached.lua: the payloads of detached records (lib/job_record.lua),
-- kept in {ns}:detached (K.detached) under their jobs' ids, for the scripts
-- that create a job one at a time, or show, match, replace or delete a job's
-- payload. The enqueue stores its batch's itself (enqueue.lua), the claim
-- reads them itself (lib/lease.lua), as the ack deletes them itself.
-- include: keys job_store

-- The payload of job `id`, whose record split_record split into `payload`:
-- a detached record's ('') from K.detached.
local function whole_payload(id, payload)
  if payload ~= '' then return payload end
  return redis.call('HGET', K.detached, id) or ''
end

-- Delete the record of job `id` for good, with its payload when the record
-- is detached. The record was read by load_meta (lib/job_store.lua), which
-- keeps its payload; a record this call did not read that way has its
-- detached payload deleted as well, if it has one.
local function delete_job_record(id)
  redis.call('HDEL', K.jobs, id)
  local payload = payload_of[id]
  if not payload or payload == '' then redis.call('HDEL', K.detached, id) end
end

-- Store new job `id`'s record: meta `m` and `payload`, detached when the
-- payload is `detach_from` bytes or more (detach_from_format; nil: never),
-- as enqueue.lua stores the jobs it creates. For the scripts that create a
-- job one at a time: a schedule's tick or trigger, a gate's waiter.
local function store_new_job(id, m, payload, detach_from)
  if detach_from and #payload >= detach_from then
    store_meta(id, m, '')
    redis.call('HSET', K.detached, id, payload)
  else
    store_meta(id, m, payload)
  end
end
