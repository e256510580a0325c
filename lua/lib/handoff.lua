-- lib/handoff.lua: the hand-off to a parked worker, called by enqueue.lua.
--
-- A worker parked on this queue (park.lua) gets the head of the queue at
-- once, leased to it exactly as its own claim would (lib/lease.lua), on its
-- hand-off channel (the wake-up channel .. ':' .. token) as a msgpack array
-- { id, record }: the job record after leasing (packed meta, then payload);
-- a detached record's (lib/job_record.lua) as { id, meta, payload }.
-- It starts the job without a wake-up and a claim round trip. Only what it
-- has room for; the rest wakes the others. A flow-aware queue (lib/flow.lua)
-- hands nothing off: its workers are woken and claim, and the claim checks
-- the limits (one HGET, only when a worker is parked).
-- include: keys parked waiting lease flow_spec metrics

-- The parked worker of record `raw` (lib/parked.lua), when it may be
-- handed a job now: it has room, the queue is not paused and not
-- flow-aware. Else nil.
local function taker(raw)
  local p = parked_parse(raw)
  if not p or p.handed >= p.capacity then return nil end
  if redis.call('SISMEMBER', K.paused, QUEUE) == 1 then return nil end
  if flow_spec() then return nil end
  return p
end

-- Lease jobs `ids` to parked worker `p` (`stored`: their stored records, or
-- nil to read them; `payloads`: their payloads when `stored` holds their
-- meta alone; `given`: detached records' payloads by id: lib/lease.lua),
-- send each on its hand-off channel, and count them against its room.
local function deliver(p, ids, now, stored, payloads, given)
  local leased, waits, detached = lease_jobs(ids, p.lease_ms, p.node, p.instance, now, stored, payloads)
  if detached then attach_payloads(leased, detached, given) end
  record_waits(waits, now)
  local channel = handoff_channel(p.token)
  for i = 1, #leased, 2 do
    local record = leased[i + 1]
    if detached and type(record) == 'table' then
      tell_parked(channel, p.shard, cmsgpack.pack({ leased[i], record[1], record[2] }))
    else
      tell_parked(channel, p.shard, cmsgpack.pack({ leased[i], record }))
    end
  end
  p.handed = p.handed + #leased / 2
  redis.call('SET', K.parked, parked_format(p), 'KEEPTTL')
end

-- Hand waiting jobs to parked worker `p` (taker's, nil when it may take
-- none), whose record the caller read (GET K.parked, when it was set: the
-- caller reads it itself so that a call with no worker parked never builds
-- this module and lib/parked.lua).
-- Returns true while jobs are left waiting for the others (so the caller
-- still wakes them).
local function hand_off_to(p, now)
  if not p then return true end
  local ids = pop_waiting(p.capacity - p.handed)
  if #ids == 0 then return true end
  deliver(p, ids, now)
  return any_waiting()
end

-- hand_off_to the parked worker whose record `raw` the caller read.
local function hand_off(raw, now)
  return hand_off_to(taker(raw), now)
end

-- An enqueue's fresh jobs, handed before they are written: `fresh` is the
-- call's created jobs as a flat list (id, stored record, in seq order; with
-- `payloads`, their payloads in the same order, each record its meta alone;
-- `given`, the detached ones' payloads by id), all
-- of them plain (priority 0, due, no ordering or limit key: bound for the
-- fifo list), none written yet. When nothing else waits they are the head
-- of the queue, so the first the worker has room for are leased to it as
-- hand_off would lease them once written and pushed, without the write,
-- the push, the pop and the read back (HSET, RPUSH, ZCARD, LPOP and HMGET:
-- about 15k instructions of the 405k a lone handed enqueue cost, callgrind).
-- Returns how many of the first jobs it handed (written, leased; the caller
-- writes and pushes the rest), 0 when the worker may take none; or nil and
-- the worker when other jobs wait: the caller writes every job and calls
-- hand_off_to with that worker (checked already), which takes the head.
local function hand_off_fresh(raw, fresh, now, payloads, given)
  local p = taker(raw)
  if not p then return 0 end
  if any_waiting() then return nil, p end
  local take = math.min(p.capacity - p.handed, #fresh / 2)
  local ids, stored = {}, {}
  for i = 1, take do ids[i], stored[i] = fresh[2 * i - 1], fresh[2 * i] end
  deliver(p, ids, now, stored, payloads, given)
  return take
end
