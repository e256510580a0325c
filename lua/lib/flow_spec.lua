-- lib/flow_spec.lua: whether a queue is flow-aware and its limits
-- (lib/flow.lua describes the layout), apart from the rest of flow control
-- so that a call on a queue without limits composes only this (one HGET a
-- call) and never builds flow.lua's functions (driver/src/scripts/compose.rs:
-- modules are run at their first use).
-- include: keys
-- composed memo: flow_call (the call whose read flow_cached is: its KEYS table)
-- composed memo: flow_cached (the limits that call read)

local NO_LIMITS = { qc = 0, qr = 0, qp = 0, kc = 0, kr = 0, kp = 0 }
local FLOW_ZEROS = '0 0 0 0 0 0'

-- The queue's limits, read once a call (nil: the queue is not flow-aware).
-- The read is kept with the call's own KEYS table, which is new at every
-- call: a function library keeps this module built from one call to the
-- next, and the next call reads the limits afresh. (Kept as per-call state
-- instead, the module was built again at every call that used it: about
-- 10k instructions of a lone claim or ack, much of it its garbage's
-- collection, callgrind.) The table is held here, so no later call's can be
-- made at its address; KEYS, not ARGV, because it is held till the next
-- call: a few key names, never payloads.
local flow_call, flow_cached = nil, nil

local function flow_spec()
  if flow_call ~= KEYS then
    flow_call, flow_cached = KEYS, nil
    local raw = redis.call('HGET', K.limits, QUEUE)
    if raw then
      local a, b, c, d, e, f = string.match(raw, '^(%d+) (%d+) (%d+) (%d+) (%d+) (%d+)$')
      if a then
        flow_cached = { qc = tonumber(a), qr = tonumber(b), qp = tonumber(c),
          kc = tonumber(d), kr = tonumber(e), kp = tonumber(f) }
      else
        flow_cached = NO_LIMITS
      end
    end
  end
  return flow_cached
end

-- The queue becomes flow-aware (a keyed job or a push-back arrived).
local function make_flow_aware()
  redis.call('HSETNX', K.limits, QUEUE, FLOW_ZEROS)
  flow_call = nil
end
