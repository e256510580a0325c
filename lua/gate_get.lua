#!lua flags=no-writes,allow-oom
-- gate_get.lua: one gate's status (lua/README.md, Workflows), read in O(1):
-- its counts, its first failure and its waiters with their decisions. A
-- waiter undecided or held whose job no longer waits in wf:awaiting was
-- deleted (delete_job.lua records no decision): it is reported as
-- 'deleted', without a scan (one ZSCORE per waiter, at most GATE.MAX_WAITERS).
-- include: check keys gate_record gate
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  wf_gates, wf_awaiting
--   writes nothing
-- ARGV[1] queue name   ARGV[2] wake-up channel   ARGV[3] gate id G
-- Reply: { 1, kind, state, created_at, sealed_at, done_at, total, pending,
--   succeeded, failed, first_failure, label, w, then per waiter: id, queue,
--   condition, on_failure, decision ('' = undecided, or a stored decision, or
--   'deleted': see above) }, or { 0 }:
-- code 1 found: the gate's status follows
-- code 0 not_found: no gate with this id (never created, or its data was deleted after GATE_KEEP)
queue_name(QUEUE)
local gid = text(ARGV[3], 'gate id', 64)
if gid == '' then fail('gate id must not be empty') end
local g = wf.load(gid)
if not g then return { 0 } end
local reply = { 1, g[G.kind], g[G.state], g[G.created_at], g[G.sealed_at], g[G.done_at],
  g[G.total], g[G.pending], g[G.succeeded], g[G.failed], g[G.first_failure], g[G.label],
  #g[G.waiters] }
for _, w in ipairs(g[G.waiters]) do
  reply[#reply + 1] = w[GW.id]
  reply[#reply + 1] = w[GW.queue]
  reply[#reply + 1] = w[GW.condition]
  reply[#reply + 1] = w[GW.on_failure]
  local decision = w[GW.decision]
  if (decision == '' or decision == 'held') and
      not redis.call('ZSCORE', K.wf_awaiting, w[GW.queue] .. '\n' .. w[GW.id]) then
    decision = 'deleted'
  end
  reply[#reply + 1] = decision
end
return reply
