-- lib/notify.lua: wake-ups, on the namespace's shard channel.
-- include: keys
--
-- Why SPUBLISH: on Redis Cluster a PUBLISH goes over the cluster bus to
-- every node, each of which spends about 3 us of CPU on it, and the
-- publishing primary about 6 us more sending it (measured on a 3-primary
-- cluster of redis-server 7.0.15; docs/performance.md, round twenty-one): a
-- cost a job pays once for every other node, so that a larger cluster
-- carries fewer wake-ups, not more. A shard channel's message stays on the
-- primary that holds the namespace (and its replicas), where the workers'
-- listeners sit (driver/src/own_primary.rs). Outside a cluster the two cost
-- the same.
--
-- Listeners of this driver version subscribe to both kinds of channel
-- (driver/src/worker/wake.rs), so they also hear an earlier version's
-- PUBLISH; an earlier version's idle worker hears this version's wake-ups
-- only at its next poll (its max_idle; docs/cluster.md, "Wake-ups on shard
-- channels", says to upgrade workers first). Hand-offs go by what the parked
-- worker said it hears (lib/parked.lua), so a job is never handed to a
-- worker that cannot hear it. What an operator sends now and then (a cancel
-- or a forced delete on the holder channel of the job's worker, cancel.lua
-- and delete_job.lua; the wake-up of a resumed queue, pause.lua) and the
-- finished channel (once an ack, cancel or delete call, and a nack that
-- dead-letters, of a queue that keeps finished jobs) stay on PUBLISH,
-- which listeners of every version hear.
--
-- A server without sharded pub/sub (before Redis 7.0) or a user not
-- allowed SPUBLISH answers with an error, and the message goes by PUBLISH:
-- never an error of the call, which has written by then.

-- Publish `message` on `channel`, a shard channel where the server allows
-- it, else a plain one.
local function shard_publish(channel, message)
  local sent = redis.pcall('SPUBLISH', channel, message)
  if type(sent) == 'table' and sent.err then redis.call('PUBLISH', channel, message) end
end

-- Wake the namespace's idle workers: `queue` has work they may claim.
local function wake_workers(queue)
  shard_publish(CHANNEL, queue)
end
