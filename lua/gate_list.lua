#!lua flags=no-writes,allow-oom
-- gate_list.lua: a page of the namespace's gates (lua/README.md,
-- Workflows), newest activity first: by their keep time in wf:expire,
-- which every join, seal and finish renews.
-- include: check keys gate_record gate
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  wf_gates, wf_expire
--   writes nothing
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] offset       ARGV[4] count (1..500)
-- Reply: flat, 13 entries per gate: id, kind, state, created_at, sealed_at,
--   done_at, total, pending, succeeded, failed, first_failure, label, and
--   how many waiters it has. O(count).
queue_name(QUEUE)
local offset = uint(ARGV[3], 'offset', MAX_U32)
local count = uint(ARGV[4], 'count', 500)
if count < 1 then fail('count must be 1 to 500') end
local reply = {}
for _, gid in ipairs(redis.call('ZREVRANGE', K.wf_expire, offset, offset + count - 1)) do
  local g = wf.load(gid)
  if g then
    for _, v in ipairs({ gid, g[G.kind], g[G.state], g[G.created_at], g[G.sealed_at], g[G.done_at],
        g[G.total], g[G.pending], g[G.succeeded], g[G.failed], g[G.first_failure], g[G.label],
        #g[G.waiters] }) do
      reply[#reply + 1] = v
    end
  end
end
return reply
