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

-- Pair each detached record (lib/job_record.lua) lease_jobs leased
-- (`detached`, its third value: their places `at` in `out` and their `ids`)
-- with its payload, from `given` (id -> payload: an enqueue's fresh jobs,
-- whose payloads it has in hand) or one HMGET of K.detached: the only string
-- of its length the call makes.
local function attach_payloads(out, detached, given)
  local at, ids = detached.at, detached.ids
  local read, read_ids = {}, {}
  for k = 1, #ids do
    if not (given and given[ids[k]]) then
      read[#read + 1] = k
      read_ids[#read_ids + 1] = ids[k]
    end
  end
  local got = #read_ids > 0 and redis.call('HMGET', K.detached, unpack(read_ids)) or {}
  local from_read = {}
  for r = 1, #read do from_read[read[r]] = got[r] end
  for k = 1, #ids do
    -- A detached record without its payload (no script leaves one so; the
    -- history checker's structural check reports one) leases with ''.
    out[at[k]] = { out[at[k]], (given and given[ids[k]]) or from_read[k] or '' }
  end
end

-- Lease the popped waiting jobs `ids` (in order) to one holder. One HMGET,
-- HSET and ZADD for the batch: each redis.call costs about a microsecond
-- before the command does anything. `stored`, when given, is their stored
-- records in the same order, already in hand (an enqueue handing its fresh
-- jobs straight to a parked worker: lib/handoff.lua), and the HMGET is not
-- made; `payloads`, when given, is their payloads, `stored` then holding
-- their records' meta alone (an enqueue's lone fresh job): a standard
-- record's splice joins the two once, where cutting the whole record and
-- joining it again would make two strings of the payload's length, each
-- hashed byte by byte (Redis's Lua hashes every byte of every string it
-- makes: about 10k instructions a KB, docs/performance.md round
-- twenty-five). Returns a flat list: id, record (packed meta, then the payload; for a detached record
-- its packed meta alone, which the caller makes a table: attach_payloads or
-- claim_payloads) per job; and, for the wait metrics
-- (lib/metrics.lua record_waits), a flat list: due time (not_before), name
-- per job, in the same order. The record is in hand here: decoding those two
-- fields again from the spliced record in the metrics cost about 2k
-- instructions a job more. The third value is nil, or the detached records'
-- places in the first list and their ids ({ at = ..., ids = ... }).
local function lease_jobs(ids, lease_ms, node, instance, now, stored, payloads)
  local count = #ids
  local records = stored or redis.call('HMGET', K.jobs, unpack(ids))
  -- A lone job's count goes as the text '1' (why: EVENTS_MAXLEN in lib/events.lua).
  local next_lease = redis.call('INCRBY', K.lease_seq, count == 1 and '1' or count) - count + 1
  local expiry = now + lease_ms
  -- ZADD takes its scores as text: a number would be formatted again for
  -- each job (%.17g, about 2k instructions); every lease expires at once.
  local score = string.format('%d', expiry)
  -- out (id, record per job) is also the HSET's field list.
  local out, lease_pairs, waits = {}, {}, {}
  -- The lease's fields after its id are the same for the whole batch:
  -- packed once (msgpack values packed together are their packings one
  -- after the other, so the bytes are those of packing all four).
  local holder = cmsgpack.pack(expiry, node, instance)
  -- unpack_limit(raw, 12, 7) below decodes the fields after the lease
  -- through the name into locals named for them (each C call, select's too,
  -- costs about 500 instructions).
  if M.queue ~= 5 or M.not_before ~= 12 or M.name ~= 16 or M.name > OLDEST_JOB_LEN then
    error('redq: lease_jobs decodes fields 5 to 16 after a 3-byte header and a 4-byte lease')
  end
  -- The header of the last spliced record's length (a batch's records
  -- mostly share one): looked up again only when the length changes.
  local header, header_len
  local n = 0
  -- The detached records' places in out, and their ids (made at the
  -- first: a table costs a call a few hundred instructions).
  local detached_at, detached_ids
  for i = 1, count do
    local raw = records[i]
    if raw then
      local id = ids[i]
      local record, due, name
      local payload = payloads and payloads[i]
      local len, unleased = stored_length(raw)
      if unleased then
        -- The usual case: splice the lease into the bytes (the four fields
        -- are first), about half the cost of unpacking and repacking; the
        -- fields after the lease are decoded only through the name. The
        -- record keeps its length (a lean record stays lean).
        if len ~= header_len then header, header_len = record_header(len), len end
        record = header .. cmsgpack.pack(next_lease) .. holder .. string.sub(raw, 8) .. (payload or '')
        local _, _queue, _dedup_key, _dedup_ttl, _ordering_key, _priority, _seq, enqueued_at,
          not_before, _attempts, _max_attempts, _retry_window, job_name = cmsgpack.unpack_limit(raw, 12, 7)
        -- Read as split_record reads it (lib/job_record.lua).
        if not_before == DUE_AT_ENQUEUE then not_before = enqueued_at end
        due, name = not_before, job_name
      else
        -- The other layouts read the record whole.
        if payload then raw = raw .. payload end
        if not len then
          -- Not a standard header: a compact record (lib/job_record.lua), or
          -- one the general path below reads.
          local after, used
          after, used, due, name = compact_after_lease(raw)
          if after then
            -- A compact record (lib/job_record.lua) leaves compact: stored
            -- whole, of the oldest length.
            record = record_header(OLDEST_JOB_LEN) .. cmsgpack.pack(next_lease) .. holder .. after ..
              (used < 0 and '' or string.sub(raw, used + 1))
          else
            -- A detached record not leased: spliced as the usual case is,
            -- after its 5-byte header (unpacking and repacking its fields
            -- cost a claim about 30k instructions a job more, callgrind).
            local dlen, dunleased = detached_length(raw)
            if dunleased then
              record = detached_header(dlen) .. cmsgpack.pack(next_lease) .. holder .. string.sub(raw, 10)
              local _, _queue, _dedup_key, _dedup_ttl, _ordering_key, _priority, _seq, enqueued_at,
                not_before, _attempts, _max_attempts, _retry_window, job_name = cmsgpack.unpack_limit(raw, 12, 9)
              if not_before == DUE_AT_ENQUEUE then not_before = enqueued_at end
              due, name = not_before, job_name
              if not detached_at then detached_at, detached_ids = {}, {} end
              detached_at[#detached_at + 1] = n + 2
              detached_ids[#detached_ids + 1] = id
            end
          end
        end
      end
      if not record then
        local m, payload = split_record(raw)
        m[M.lease_id] = next_lease
        m[M.lease_expiry] = expiry
        m[M.worker_node] = node
        m[M.worker_instance] = instance
        record = encode_record(m, payload)
        due, name = m[M.not_before], m[M.name]
        if payload == '' then
          if not detached_at then detached_at, detached_ids = {}, {} end
          detached_at[#detached_at + 1] = n + 2
          detached_ids[#detached_ids + 1] = id
        end
      end
      next_lease = next_lease + 1
      n = n + 2
      out[n - 1] = id
      out[n] = record
      lease_pairs[n - 1] = score
      lease_pairs[n] = id
      waits[n - 1] = due
      waits[n] = name
    end
  end
  if n > 0 then
    redis.call('HSET', K.jobs, unpack(out))
    redis.call('ZADD', K.leased, unpack(lease_pairs))
  end
  return out, waits, detached_at and { at = detached_at, ids = detached_ids }
end

-- A claim of this many detached records or more leaves their payloads to
-- its caller: each record goes as { meta } (driver/src/leased.rs), and the
-- caller reads the payloads with one HMGET of K.detached after the claim.
-- A payload read here becomes a Lua string, hashed byte by byte: a claim of
-- 16 jobs of 10 KB cost 218k instructions a job with their payloads, 50k
-- without (callgrind, docs/performance.md round twenty-eight), about 16k a
-- KB, where the caller's read is one round trip more, about 30 us of the
-- server's time a call: 10 KB of payloads' worth. With the default size of
-- 4 KB (driver/src/record_format.rs) three detached records are 12 KB at
-- least; one or two are read here.
local PAYLOADS_APART_FROM = 3

-- The detached records of a claim's `out` (lease_jobs's third value), each
-- made { meta, payload } or, from PAYLOADS_APART_FROM on, { meta }.
local function claim_payloads(out, detached)
  if #detached.ids < PAYLOADS_APART_FROM then return attach_payloads(out, detached) end
  for _, at in ipairs(detached.at) do out[at] = { out[at] } end
end

-- The lease id of record `record` as lease_jobs returns it.
local function leased_lease_id(record)
  if type(record) == 'table' then return (select(2, cmsgpack.unpack_limit(record[1], 1, 5))) end
  return (select(2, cmsgpack.unpack_limit(record, 1, 3)))
end
