-- lib/flow_spec.lua: whether a queue is flow-aware and its limits
-- (lib/flow.lua describes the layout), apart from the rest of flow control
-- so that a call on a queue without limits composes only this (one HGET a
-- call) and never builds flow.lua's functions (driver/src/scripts/compose.rs:
-- modules are run at their first use).
-- include: keys
-- composed per call: flow_read and flow_cached are the call's own read of its queue's limits

local NO_LIMITS = { qc = 0, qr = 0, qp = 0, kc = 0, kr = 0, kp = 0 }
local FLOW_ZEROS = '0 0 0 0 0 0'

-- The queue's limits, read once a call (nil: the queue is not flow-aware).
local flow_read, flow_cached = false, nil

local function flow_spec()
  if not flow_read then
    flow_read = true
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
  flow_read = false
end
