-- lib/parked.lua: the record of the one worker parked on a queue (K.parked,
-- written by park.lua, read by lib/handoff.lua and unpark.lua).
-- include: keys

-- A parked record (the string K.parked holds), or nil when it is not one:
-- its token, identity, lease, how many jobs it can take and how many it was
-- handed so far. The record is one string, "token node instance lease_ms
-- capacity handed".
local function parked_parse(raw)
  if not raw then return nil end
  local token, node, instance, lease_ms, capacity, handed =
    string.match(raw, '^(%d+) (%d+) (%d+) (%d+) (%d+) (%d+)$')
  if not token then return nil end
  return {
    token = token, node = node, instance = tonumber(instance),
    lease_ms = tonumber(lease_ms), capacity = tonumber(capacity), handed = tonumber(handed),
  }
end

-- The worker parked on this queue, or nil.
local function parked_read()
  return parked_parse(redis.call('GET', K.parked))
end

local function parked_format(p)
  return table.concat({ p.token, p.node, string.format('%d', p.instance),
    string.format('%d', p.lease_ms), string.format('%d', p.capacity),
    string.format('%d', p.handed) }, ' ')
end

-- Each parked worker listens for hand-offs on its own channel.
local function handoff_channel(token)
  return CHANNEL .. ':' .. token
end
