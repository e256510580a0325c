-- lib/handoff.lua: the hand-off to a parked worker, called by enqueue.lua.
--
-- A worker parked on this queue (park.lua) gets the head of the queue at
-- once, leased to it exactly as its own claim would (lib/lease.lua), on its
-- hand-off channel (the wake-up channel .. ':' .. token) as a msgpack array
-- { id, record }: the job record after leasing (packed meta, then payload).
-- It starts the job without a wake-up and a claim round trip. Only what it
-- has room for; the rest wakes the others. A flow-aware queue (lib/flow.lua)
-- hands nothing off: its workers are woken and claim, and the claim checks
-- the limits (one HGET, only when a worker is parked).
-- include: keys parked waiting lease flow_spec metrics

-- Hand waiting jobs to the parked worker whose record `raw` the caller read
-- (GET K.parked, when it was set: the caller reads it itself so that a call
-- with no worker parked never builds this module and lib/parked.lua).
-- Returns true while jobs are left waiting for the others (so the caller
-- still wakes them).
local function hand_off(raw, now)
  local p = parked_parse(raw)
  if not p or p.handed >= p.capacity then return true end
  if redis.call('SISMEMBER', K.paused, QUEUE) == 1 then return true end
  if flow_spec() then return true end
  local ids = pop_waiting(p.capacity - p.handed)
  if #ids == 0 then return true end
  local leased, waits = lease_jobs(ids, p.lease_ms, p.node, p.instance, now)
  record_waits(waits, now)
  local channel = handoff_channel(p.token)
  for i = 1, #leased, 2 do
    redis.call('PUBLISH', channel, cmsgpack.pack({ leased[i], leased[i + 1] }))
  end
  p.handed = p.handed + #leased / 2
  redis.call('SET', K.parked, parked_format(p), 'KEEPTTL')
  return waiting_count() > 0
end
