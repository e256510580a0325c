#!lua flags=no-writes,allow-oom
-- counts.lua: one consistent snapshot of a queue's size by state.
-- include: check clock keys job_record job_store waiting gate kept_record retention_spec
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  jobs, fifo, waiting, scheduled, leased, dead, ord_ready, ord_blocked_n, paused,
--          completed, cancelled, retention, lim_held, wf_awaiting_n
--   writes nothing
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- Reply: { waiting, scheduled, leased, dead, blocked, lapsed, paused (0/1),
--          oldest_enqueued_at_ms (the earliest enqueued waiting job of any
--          priority, 0 when none), now_ms, completed, cancelled, held,
--          awaiting, due, due_since_ms (0 when none) }
-- waiting includes released ordering successors not yet moved into the
-- queue; blocked counts jobs waiting behind another job's ordering key;
-- lapsed counts leases past their expiry that nobody reclaimed yet;
-- completed and cancelled count the kept ones (lib/kept.lua); held counts
-- due jobs held back by their limit key (lib/flow.lua), not in waiting;
-- due counts the scheduled jobs whose time has come (part of scheduled):
-- only a claim moves them to waiting, so with no worker left they stay
-- here, and due_since says since when the earliest has been due.
-- awaiting counts jobs waiting on a gate (lib/gate.lua: undecided or held),
-- a waiter its gate fired included until a claim of its queue decides it:
-- it is in ord:ready too, so waiting leaves it out (lib/gate.lua
-- count_fired). Every job is counted in one state.
queue_name(QUEUE)
local now = now_ms()
local fired = tonumber(redis.call('HGET', K.wf_awaiting_n, wf.fired_field(QUEUE)) or '0')
local waiting = waiting_count() +
  redis.call('ZLEXCOUNT', K.ord_ready, '[' .. QUEUE .. '\n', '(' .. QUEUE .. '\11') - fired
-- The oldest ready job, whatever its priority: not the claim order's head,
-- which a newer job of a higher priority replaces, so a starved job would
-- never show. A waiting zset score is (255 - priority) * PRIORITY_SPAN + seq
-- (lib/waiting.lua) and seq grows with each enqueue, so within a priority
-- band the first member by score is the band's earliest enqueued; the fifo
-- list (priority 0 only) is sorted by seq, so its first is its earliest.
-- Each band's head is found by jumping to the next band's base score: at
-- most 256 bands (priorities 0..255), so at most 256 ZRANGE BYSCORE LIMIT 1
-- (O(log n) each) and 257 record reads, whatever the queue's size; a queue
-- with one priority costs two ZRANGEs and two reads, as before.
local head_at = 0
local function consider(id)
  local m = load_meta(id)
  if m and (head_at == 0 or m[M.enqueued_at] < head_at) then head_at = m[M.enqueued_at] end
end
local band_head = redis.call('ZRANGE', K.waiting, 0, 0, 'WITHSCORES')
local bands = 0
while band_head[1] and bands < 256 do
  bands = bands + 1
  consider(band_head[1])
  local next_base = (math.floor(tonumber(band_head[2]) / PRIORITY_SPAN) + 1) * PRIORITY_SPAN
  band_head = redis.call('ZRANGE', K.waiting, string.format('%d', next_base), '+inf',
    'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')
end
local fifo_head = redis.call('LINDEX', K.fifo, 0)
if fifo_head then consider(fifo_head) end
local due, due_since = redis.call('ZCOUNT', K.scheduled, '-inf', now), 0
if due > 0 then
  due_since = tonumber(redis.call('ZRANGE', K.scheduled, 0, 0, 'WITHSCORES')[2])
end
-- Kept jobs past the queue's age bound are not counted (lib/kept_record.lua).
local kept_since = kept_range_min(retention_policy(), now)
return {
  waiting,
  redis.call('ZCARD', K.scheduled),
  redis.call('ZCARD', K.leased),
  redis.call('ZCARD', K.dead),
  tonumber(redis.call('HGET', K.ord_blocked_n, QUEUE) or '0'),
  redis.call('ZCOUNT', K.leased, '-inf', now),
  redis.call('SISMEMBER', K.paused, QUEUE),
  head_at,
  now,
  redis.call('ZCOUNT', K.completed, kept_since, '+inf'),
  redis.call('ZCOUNT', K.cancelled, kept_since, '+inf'),
  redis.call('ZCARD', K.lim_held),
  tonumber(redis.call('HGET', K.wf_awaiting_n, QUEUE) or '0'),
  due,
  due_since,
}
