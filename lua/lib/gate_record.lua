-- lib/gate_record.lua: the gate record, defined once. A gate is what a batch,
-- a job's dependencies and a tree are inside (lua/README.md, Workflows): a
-- set of members counted as they finish and up to GATE.MAX_WAITERS waiters
-- decided once they all have. Its value in {ns}:wf:gates (K.wf_gates) is this
-- msgpack array; fields are only ever appended. GATE.new builds one.
--
-- G is the schema: G.<field> is the field's position in the array (from 1),
-- one field a line in stored order. Every field is always present.

local G = {
  kind = 1,            -- 'batch' | 'deps' | 'tree'
  state = 2,           -- 'open' (members may join) | 'sealed' (waiters exist, no joins)
                       -- | 'done' (sealed, nothing pending: waiters decided) | 'cancelled'
  created_at = 3,      -- unix ms (Redis clock)
  sealed_at = 4,       -- unix ms, 0 = not sealed
  done_at = 5,         -- unix ms it became done or cancelled, 0 = neither
  total = 6,           -- members counted in
  pending = 7,         -- members not finished yet
  succeeded = 8,       -- members that completed
  failed = 9,          -- members dead-lettered, cancelled or deleted
  first_failure = 10,  -- text: "<id> <outcome>: <detail>" of the first failed member, '' = none
  label = 11,          -- text: the producer's name for it, '' = none
  waiters = 12,        -- array of waiters, each an array at the GW positions below
}

-- The bounds and the helpers of gate records, in one table: a script may
-- have at most 200 locals, and the claim, ack and nack scripts are near it.
local GATE = { LEN = 12 }

-- A waiter: the job released (or failed) when its gate is done.
local GW = {
  id = 1,              -- the waiter's job id
  queue = 2,           -- its queue
  condition = 3,       -- 'all' (every member finished) | 'success' (every member completed)
  on_failure = 4,      -- when a member failed and the condition is 'success':
                       -- 'dead' | 'cancel' | 'hold'
  decision = 5,        -- '' (undecided) | 'released' | 'dead' | 'cancelled' | 'held'
                       -- | 'operator_released' | 'operator_failed'
}

GATE.MAX_WAITERS = 8
-- A job counts toward at most this many gates (its own `gate` and its `wf:of`
-- entries), which bounds what finishing it costs.
GATE.MAX_GATES_PER_JOB = 100
-- How long a finished (done or cancelled) gate's data is kept once its
-- waiters are decided, and an open gate after its last join: 24 h.
GATE.KEEP_MS = 86400000
GATE.MAX_FAILURE_BYTES = 512
GATE.MAX_LABEL_BYTES = 256
-- Entries (members with their outcomes) at most one call deletes, so that
-- deleting a 100 000-member batch's data is spread over many calls.
GATE.TRIM_ENTRIES = 200

-- A new open gate of `kind`, created at `now`.
function GATE.new(kind, now)
  return { kind, 'open', now, 0, 0, 0, 0, 0, 0, '', '', {} }
end

function GATE.encode(g)
  return cmsgpack.pack(g)
end

-- A stored gate record; an empty waiter list may come back as a map-less
-- table, which is the same empty list to Lua.
function GATE.decode(raw)
  local g = cmsgpack.unpack(raw)
  if type(g[G.waiters]) ~= 'table' then g[G.waiters] = {} end
  return g
end
