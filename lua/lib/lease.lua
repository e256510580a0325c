-- lib/lease.lua: leases, the fencing of a job to one holder: granting them
-- (the claim transition, shared by claim.lua and lib/handoff.lua), checking a
-- holder's token, and clearing them.
-- include: keys job_record

-- Check a worker's lease token against the job's current lease. lease 0 means
-- "whatever lease is current" (the seed trait's unfenced calls).
local function lease_matches(m, lease)
  return m[M.lease_id] ~= 0 and (lease == 0 or m[M.lease_id] == lease)
end

-- Whether a lease of this queue lapsed by `now` (one ZCOUNT: claims ask
-- before they scan for lapsed leases, which is rarely needed).
local function any_lapsed(now)
  return redis.call('ZCOUNT', K.leased, '-inf', now) > 0
end

local function clear_lease(m)
  m[M.lease_id] = 0
  m[M.lease_expiry] = 0
  m[M.worker_node] = ''
  m[M.worker_instance] = 0
end

-- Lease the popped waiting jobs `ids` (in order) to one holder. One HMGET,
-- HSET and ZADD for the batch: each redis.call costs about a microsecond
-- before the command does anything. Returns a flat list: id, record (packed
-- meta, then the payload) per job.
local function lease_jobs(ids, lease_ms, node, instance, now)
  local count = #ids
  local records = redis.call('HMGET', K.jobs, unpack(ids))
  local next_lease = redis.call('INCRBY', K.lease_seq, count) - count + 1
  local expiry = now + lease_ms
  local meta_pairs, lease_pairs, out = {}, {}, {}
  -- The lease's fields after its id are the same for the whole batch:
  -- packed once (msgpack values packed together are their packings one
  -- after the other, so the bytes are those of packing all four).
  local holder = cmsgpack.pack(expiry, node, instance)
  local unleased = RECORD_HEADER .. CLEARED_LEASE
  for i = 1, count do
    local raw = records[i]
    if raw then
      local id = ids[i]
      local record
      if string.sub(raw, 1, 7) == unleased then
        -- The usual case: splice the lease into the bytes (the four fields
        -- are first), about half the cost of unpacking and repacking.
        record = RECORD_HEADER .. cmsgpack.pack(next_lease) .. holder .. string.sub(raw, 8)
      else
        local m, payload = split_record(raw)
        m[M.lease_id] = next_lease
        m[M.lease_expiry] = expiry
        m[M.worker_node] = node
        m[M.worker_instance] = instance
        record = encode_record(m, payload)
      end
      next_lease = next_lease + 1
      meta_pairs[#meta_pairs + 1] = id
      meta_pairs[#meta_pairs + 1] = record
      lease_pairs[#lease_pairs + 1] = expiry
      lease_pairs[#lease_pairs + 1] = id
      out[#out + 1] = id
      out[#out + 1] = record
    end
  end
  if #meta_pairs > 0 then
    redis.call('HSET', K.jobs, unpack(meta_pairs))
    redis.call('ZADD', K.leased, unpack(lease_pairs))
  end
  return out
end
