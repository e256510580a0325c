#!lua
-- rewrite_records.lua: one bounded step of taking a namespace's compact and
-- detached job records (lib/job_record.lua) back to the standard layout, so
-- that a driver older than those formats can read every job again
-- (driver/src/record_rewrite.rs; `redq record-format standard --rewrite`).
-- split_record reads every layout and encode_record writes the standard
-- one, so every reader sees the same job before and after, and a job's
-- state, lease and place are never touched.
--
-- Steps of three kinds:
--   count:   one HSCAN step of K.jobs (COUNT `count`), as search_jobs.lua
--            walks it: the compact records it met, the detached records of
--            jobs not leased and those of leased jobs. Writes nothing.
--   rewrite: the same step, which also rewrites the compact records it met
--            (a fresh waiting job's few dozen bytes each: only an enqueue
--            writes one) and names the unleased detached ones, whose
--            payloads may be large, for `ids` steps.
--   ids:     rewrite the detached records of these jobs, in order, until
--            the payloads rewritten come to `budget` bytes (at least one
--            is): each record's payload joins it again and leaves
--            K.detached. Redis's Lua hashes every byte of every string it
--            makes, so the budget, not a count, bounds the step.
-- A detached record of a leased job is never rewritten: its worker may
-- still read the payload from K.detached after its claim (a claim of
-- several leaves them apart, driver/src/leased.rs). Its job finishing
-- deletes it; a later rewrite takes it once its lease is over. A job
-- leased, gone or rewritten since the walk named it is passed over.
--
-- No allow-oom: a rewritten compact record grows by 17 bytes, and under
-- maxmemory with noeviction Redis refuses the whole step before it runs.
-- include: check keys job_record
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  jobs, detached
--   writes jobs, detached (rewrite and ids steps)
-- ARGV[1] queue name (any valid one: the records are the namespace's)
-- ARGV[2] wake-up channel
-- ARGV[3] step: count | rewrite | ids
--   count, rewrite: ARGV[4] cursor ("0" to start)   ARGV[5] count (1..1000)
--   ids:            ARGV[4] budget (bytes, 1..2^30)  ARGV[5..] job ids (1..1000)
-- Reply:
--   count, rewrite: { next_cursor, examined, compact, detached, leased, id1, id2, ... }
--     next_cursor "0" when the walk is done; compact the compact records met
--     (rewritten by a rewrite step); detached and leased the detached
--     records met of jobs not leased and of leased ones; the ids (rewrite
--     only) are the first kind's, for ids steps.
--   ids: { taken, rewritten, leased }
--     taken how many of the ids, from the first, this step dealt with (the
--     caller sends the rest again); rewritten how many of those it
--     rewrote; leased how many it passed over because their jobs are
--     leased now.
queue_name(QUEUE)
local step = ARGV[3]

-- Whether stored record `raw` is compact: a fixarray of 3 to 5 fields,
-- where every other record starts with an array16 or array32 header.
local function is_compact(raw)
  local head = string.byte(raw)
  return head >= 0x90 + COMPACT_MIN and head <= 0x90 + COMPACT_LEN
end

if step == 'ids' then
  local budget = uint(ARGV[4], 'byte budget', 1073741824)
  if budget == 0 then fail('byte budget must be 1 to 1073741824') end
  local n = #ARGV - 4
  if n < 1 or n > 1000 then fail('expected 1 to 1000 job ids, got ' .. n) end
  local taken, rewritten, leased, bytes = 0, 0, 0, 0
  for i = 5, #ARGV do
    if bytes >= budget then break end
    local id = ARGV[i]
    local raw = redis.call('HGET', K.jobs, id)
    local len, cleared = false, false
    if raw then len, cleared = detached_length(raw) end
    if len and not cleared then
      leased = leased + 1
    elseif len then
      local payload = redis.call('HGET', K.detached, id)
      -- No script leaves a detached record without its payload; one found
      -- so is left as it is rather than given an empty one.
      if payload then
        local m = split_record(raw)
        redis.call('HSET', K.jobs, id, encode_record(m, payload))
        redis.call('HDEL', K.detached, id)
        rewritten = rewritten + 1
        bytes = bytes + #payload
      end
    end
    taken = taken + 1
  end
  return { taken, rewritten, leased }
end

if step ~= 'count' and step ~= 'rewrite' then
  fail('step must be count, rewrite or ids, got ' .. string.format('%q', tostring(step)))
end
local cursor = decimal_u64(ARGV[4], 'cursor')
local count = uint(ARGV[5], 'count', 1000)
if count == 0 then fail('count must be 1 to 1000') end
if #ARGV ~= 5 then fail('expected 5 arguments for a ' .. step .. ' step, got ' .. #ARGV) end
local rewrite = step == 'rewrite'

local found = redis.call('HSCAN', K.jobs, cursor, 'COUNT', count)
local records = found[2]
local compact, detached, leased, ids = 0, 0, 0, {}
for i = 1, #records, 2 do
  local id, raw = records[i], records[i + 1]
  if is_compact(raw) then
    compact = compact + 1
    if rewrite then
      local m, payload = split_record(raw)
      redis.call('HSET', K.jobs, id, encode_record(m, payload))
    end
  else
    local len, cleared = detached_length(raw)
    if len and cleared then
      detached = detached + 1
      ids[#ids + 1] = id
    elseif len then
      leased = leased + 1
    end
  end
end
local reply = { found[1], #records / 2, compact, detached, leased }
if rewrite then
  for i = 1, #ids do reply[5 + i] = ids[i] end
end
return reply
