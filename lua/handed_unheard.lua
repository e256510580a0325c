#!lua flags=no-writes,allow-oom
-- handed_unheard.lua: the jobs a park may have handed to its worker, which
-- the worker looks for after it lost hand-off messages (a broken subscriber
-- connection, a lagging listener, a moved slot: driver/src/worker/unheard.rs).
--
-- A job handed to a park is leased to the parked worker by the enqueue
-- (lib/handoff.lua): its lease id is above the lease sequence its park read
-- and at most the one its unpark read (park.lua, unpark.lua), and its lease
-- expires `lease_ms` after the hand-off, between the park's and the unpark's
-- clocks. Nobody extends a job its worker never heard of, so it is still
-- found there in the leased set until its lease lapses.
-- Reads only: the worker gives back what it never heard (release.lua).
-- include: check keys job_record
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  leased, jobs
--   writes nothing
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] worker node (decimal u64)   ARGV[4] worker instance (u32)
-- ARGV[5] lease ids above this (the park's lease sequence)
-- ARGV[6] lease ids up to this (the unpark's)
-- ARGV[7] lease expiries from this (ms)   ARGV[8] lease expiries up to this (ms)
-- ARGV[9] offset into the leased set's stretch between those expiries
-- ARGV[10] how many of its entries to look at (1..1000)
-- Reply: { next offset (-1 when the stretch is done), id, lease id, ... }:
-- the jobs of the stretch looked at that are leased to this worker under a
-- lease in the range.
queue_name(QUEUE)
local node = decimal_u64(ARGV[3], 'worker node')
local instance = uint(ARGV[4], 'worker instance', MAX_U32)
local lease_above = uint(ARGV[5], 'lease ids above', 9007199254740991)
local lease_through = uint(ARGV[6], 'lease ids up to', 9007199254740991)
local expiry_from = uint(ARGV[7], 'expiries from', 9007199254740991)
local expiry_through = uint(ARGV[8], 'expiries up to', 9007199254740991)
local offset = uint(ARGV[9], 'offset', 9007199254740991)
local count = uint(ARGV[10], 'count', 1000)
if count < 1 then fail('count must be 1 to 1000, got 0') end

local ids = redis.call('ZRANGEBYSCORE', K.leased, expiry_from, expiry_through,
  'LIMIT', offset, count)
local out = { #ids < count and -1 or offset + #ids }
if #ids == 0 then return out end
local records = redis.call('HMGET', K.jobs, unpack(ids))
for i = 1, #ids do
  local raw = records[i]
  if raw then
    local m = split_record(raw)
    local lease = m[M.lease_id]
    if m[M.queue] == QUEUE and lease > lease_above and lease <= lease_through
        and m[M.worker_node] == node and m[M.worker_instance] == instance then
      out[#out + 1] = ids[i]
      out[#out + 1] = lease
    end
  end
end
return out
