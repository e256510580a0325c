-- lib/parked.lua: the record of the one worker parked on a queue (K.parked,
-- written by park.lua, read by lib/handoff.lua and unpark.lua).
-- include: keys

-- A parked record (the string K.parked holds), or nil when it is not one:
-- its token, identity, lease, how many jobs it can take and how many it was
-- handed so far, and `head`, the record's text before `handed`. The record
-- is one string, "token node instance lease_ms capacity handed".
local function parked_parse(raw)
  if not raw then return nil end
  local head, token, node, instance, lease_ms, capacity, handed =
    string.match(raw, '^((%d+) (%d+) (%d+) (%d+) (%d+) )(%d+)$')
  if not token then return nil end
  return {
    token = token, node = node, instance = tonumber(instance),
    lease_ms = tonumber(lease_ms), capacity = tonumber(capacity), handed = tonumber(handed),
    head = head,
  }
end

-- The worker parked on this queue, or nil.
local function parked_read()
  return parked_parse(redis.call('GET', K.parked))
end

-- The record of `p`. A parsed one keeps its head, every field but
-- `handed`, which is all a hand-off changes: formatting the six fields again
-- cost about 14k instructions of a lone hand-off (callgrind).
local function parked_format(p)
  local head = p.head or table.concat({ p.token, p.node, string.format('%d', p.instance),
    string.format('%d', p.lease_ms), string.format('%d', p.capacity) }, ' ') .. ' '
  return head .. string.format('%d', p.handed)
end

-- Each parked worker listens for hand-offs on its own channel.
local function handoff_channel(token)
  return CHANNEL .. ':' .. token
end
