-- lib/parked.lua: the record of the one worker parked on a queue (K.parked,
-- written by park.lua, read by lib/handoff.lua and unpark.lua).
-- include: keys

-- The parse of the last parked record's head (every field but `handed`,
-- which each hand-off changes): a park is handed job after job, and its
-- head parsed again each time cost about 9k instructions of a lone
-- hand-off (callgrind).
-- composed memo: parked_memo (a cache of the parse of the last head, by its text)
local parked_memo

-- A parked record (the string K.parked holds), or nil when it is not one:
-- its token, identity, lease, how many jobs it can take and how many it was
-- handed so far, and `head`, the record's text before `handed`. The record
-- is one string, "token node instance lease_ms capacity handed". The table
-- is the memo's, its `handed` set from `raw`: read it and change only
-- `handed`.
local function parked_parse(raw)
  if not raw then return nil end
  local head, handed = string.match(raw, '^(.* )(%d+)$')
  if not head then return nil end
  local p = parked_memo
  if not (p and p.head == head) then
    local token, node, instance, lease_ms, capacity =
      string.match(head, '^(%d+) (%d+) (%d+) (%d+) (%d+) $')
    if not token then return nil end
    p = {
      token = token, node = node, instance = tonumber(instance),
      lease_ms = tonumber(lease_ms), capacity = tonumber(capacity), handed = 0,
      head = head,
    }
    parked_memo = p
  end
  p.handed = tonumber(handed)
  return p
end

-- The worker parked on this queue, or nil.
local function parked_read()
  return parked_parse(redis.call('GET', K.parked))
end

-- The record of `p`. A parsed one keeps its head, every field but
-- `handed`, which is all a hand-off changes: formatting the six fields again
-- cost about 7k instructions of a lone hand-off (callgrind).
local function parked_format(p)
  local head = p.head or table.concat({ p.token, p.node, string.format('%d', p.instance),
    string.format('%d', p.lease_ms), string.format('%d', p.capacity) }, ' ') .. ' '
  return head .. string.format('%d', p.handed)
end

-- Each parked worker listens for hand-offs on its own channel.
local function handoff_channel(token)
  return CHANNEL .. ':' .. token
end
