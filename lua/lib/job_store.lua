-- lib/job_store.lua: reading and writing a job's record in {ns}:jobs (K.jobs)
-- when a script changes its meta but never its payload.
-- include: keys job_record
-- composed per call: payload_of holds the payloads this call read

-- Payloads of the records load_meta read, for store_meta to write back.
local payload_of = {}

local function load_meta(id)
  local raw = redis.call('HGET', K.jobs, id)
  if not raw then return nil end
  local m, payload = split_record(raw)
  payload_of[id] = payload
  return m
end

-- Write a record's meta; `payload` is needed only when the record was not
-- read by load_meta in this script (a new job).
local function store_meta(id, m, payload)
  payload = payload or payload_of[id]
  if not payload then error('redq: store_meta of job ' .. id .. ' without its payload') end
  redis.call('HSET', K.jobs, id, encode_record(m, payload))
end
