-- lib/parked.lua: the record of the one worker parked on a queue (K.parked,
-- written by park.lua, read by lib/handoff.lua and unpark.lua).
-- include: keys notify

-- The parse of the last parked record's head (every field but `handed`,
-- which each hand-off changes): a park is handed job after job, and its
-- head parsed again each time cost about 9k instructions of a lone
-- hand-off (callgrind).
-- composed memo: parked_memo (a cache of the parse of the last head, by its text)
local parked_memo

-- A parked record (the string K.parked holds), or nil when it is not one:
-- its token, identity, lease, how many jobs it can take, whether it hears
-- shard channels (`shard`), how many it was handed so far, and `head`, the
-- record's text before `handed`. The record is one string, "token node
-- instance lease_ms capacity handed", with "s " before `handed` when the
-- worker hears shard channels: a driver before that field finds no record
-- it can read there, so it hands that worker nothing and wakes it instead,
-- by the PUBLISH it makes, which the worker hears too. The table is the
-- memo's, its `handed` set from `raw`: read it and change only `handed`.
local function parked_parse(raw)
  if not raw then return nil end
  local head, handed = string.match(raw, '^(.* )(%d+)$')
  if not head then return nil end
  local p = parked_memo
  if not (p and p.head == head) then
    local token, node, instance, lease_ms, capacity, shard =
      string.match(head, '^(%d+) (%d+) (%d+) (%d+) (%d+) (s?) ?$')
    if not token then return nil end
    p = {
      token = token, node = node, instance = tonumber(instance),
      lease_ms = tonumber(lease_ms), capacity = tonumber(capacity), handed = 0,
      shard = shard == 's', head = head,
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
    string.format('%d', p.lease_ms), string.format('%d', p.capacity) }, ' ')
    .. (p.shard and ' s ' or ' ')
  return head .. string.format('%d', p.handed)
end

-- Each parked worker listens for hand-offs on its own channel.
local function handoff_channel(token)
  return CHANNEL .. ':' .. token
end

-- Publish `message` on a parked worker's hand-off `channel`, as a shard
-- channel when it hears those (`shard`), else a plain one.
local function tell_parked(channel, shard, message)
  if shard then shard_publish(channel, message)
  else redis.call('PUBLISH', channel, message) end
end
