#!lua flags=allow-oom
-- gate_cancel.lua: cancel a gate (a batch, a job's dependencies, a tree;
-- lua/README.md, Workflows): an open or sealed gate becomes cancelled, and
-- each waiter still undecided goes to ord:ready, where its queue's claim
-- cancels it (lib/gate_decide.lua). Nothing else: the members that are
-- still pending are cancelled by the caller, page by page, with cancel.lua
-- per queue (gate_members.lua lists them). O(waiters) <= 8.
-- allow-oom: cancelling frees memory.
-- include: check clock keys gate_record gate events
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  jobs, wf_gates
--   writes wf_gates, wf_expire, ord_ready, events
-- ARGV[1] queue name   ARGV[2] wake-up channel   ARGV[3] gate id G
-- ARGV[4] by: who cancels (text, at most 128 bytes, '' = not given)
-- last ARGV, optional: the operator's actor, marked (lib/events.lua: ARGC leaves it out)
-- Reply: { code } or { code, state }:
-- code 1 cancelled: the gate is cancelled now; its waiters are cancelled by their queues' next claims
-- code 0 not_found: no gate with this id
-- code 2 already_done: the gate was done or cancelled before (its state follows); nothing changed
queue_name(QUEUE)
local gid = text(ARGV[3], 'gate id', 64)
if gid == '' then fail('gate id must not be empty') end
local by = text(ARGV[4], 'cancelled by', 128)
if by ~= '' then BY = by end
local g = wf.load(gid)
if not g then return { 0 } end
local state = g[G.state]
if state ~= 'open' and state ~= 'sealed' then return { 2, state } end
local now = now_ms()
g[G.state], g[G.done_at] = 'cancelled', now
wf.wake_waiters(gid, g)
wf.save(gid, g)
wf.renew(gid, now)
emit(K.events, 'gate_cancelled', QUEUE, now, 'id', gid, 'name', g[G.kind])
wf.trim(now)
return { 1 }
