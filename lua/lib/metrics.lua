-- lib/metrics.lua: wait and run times and outcome counts per queue and job
-- name, in rollups and monotonic totals, all in one hash per queue:
-- K.metrics, {ns}:q:Q:metrics (the driver reads it: driver/src/metrics/).
-- include: keys job_record
--
-- Fields of K.metrics:
--   "#"              how many job names are admitted (at most METRIC_NAMES_MAX)
--   "names"          msgpack array of the admitted names, in admission order
--   "t|<name>"       totals since the queue began: never reset (Prometheus counters);
--                    its window position holds the name's newest 5 s window
--   "<r><slot>|<name>"  rollup r ('s' 5 s, 'm' 1 min, 'h' 1 h), slot = window % slots
-- Each value is a msgpack map from MV positions to numbers, zeros left out
-- (an array when the positions happen to run 1, 2, ...): a value holds a few
-- buckets, and packing 58 numbers where 5 are set cost about 2 us more a
-- write. driver/src/metrics/layout.rs holds the same positions; a test pins
-- the two together. A rollup slot is
-- a ring: the first write of a new window overwrites what the slot held, and
-- readers skip a slot whose window is not the one they asked for, so the hash
-- is bounded (slots x names) with no janitor and no scan.
-- A name is "(none)" for jobs without one; once METRIC_NAMES_MAX names are
-- admitted, any other name is counted as "(other)" (not admitted itself).
-- Cost: every write is one HMGET and one HSET for the whole batch (the totals
-- and the 5 s slot of each name), plus one HMGET (and 2 fields more in the
-- HSET) the first time a name writes a newer 5 s window, and an HGET and an
-- HSET the first time a name is seen.

local METRIC_NAMES_MAX = 100
local METRIC_BUCKETS = 24 -- bucket b holds times <= 2^b ms (b < 23); 23 holds the rest
local METRIC_ROLLUPS = {
  { 's', 5000, 192 },      -- 5 s windows for 16 min
  { 'm', 60000, 1440 },    -- 1 min windows for 24 h
  { 'h', 3600000, 2160 },  -- 1 h windows for 90 days
}
local MV = {
  window = 1,      -- the window's number (its start / its width); in the totals, the newest 5 s window
  completed = 2, retried = 3, dead = 4, cancelled = 5, reclaimed = 6,
  wait_count = 7, wait_sum = 8, wait_bucket = 9,   -- buckets 9 .. 32
  run_count = 33, run_sum = 34, run_bucket = 35,   -- buckets 35 .. 58
}
local METRIC_LEN = 58

-- The bucket of a time in ms: the least b with ms <= 2^b, at most 23.
local function metric_bucket(ms)
  if ms <= 1 then return 0 end
  local mantissa, exponent = math.frexp(ms)
  local b = exponent
  if mantissa == 0.5 then b = exponent - 1 end
  if b >= METRIC_BUCKETS then b = METRIC_BUCKETS - 1 end
  return b
end

-- A tally collects one call's changes: name -> { [MV position] = delta }.
local function tally_new()
  return { rows = {}, order = {} }
end

local function tally_row(t, name)
  if name == '' then name = '(none)' end
  local row = t.rows[name]
  if not row then
    row = {}
    t.rows[name] = row
    t.order[#t.order + 1] = name
  end
  return row
end

-- Count one outcome (MV.completed, MV.retried, ...) of a job named `name`.
local function tally_count(t, name, what, n)
  local row = tally_row(t, name)
  row[what] = (row[what] or 0) + (n or 1)
end

-- Record one time (ms) of kind 'wait' or 'run'. The positions are named,
-- not built from the kind ('wait' .. '_count'): a concatenation per field
-- and job costs about 750 instructions.
local function tally_time(t, name, kind, ms)
  local row = tally_row(t, name)
  local count, sum, bucket
  if kind == 'wait' then
    count, sum, bucket = MV.wait_count, MV.wait_sum, MV.wait_bucket
  else
    count, sum, bucket = MV.run_count, MV.run_sum, MV.run_bucket
  end
  bucket = bucket + metric_bucket(ms)
  row[count] = (row[count] or 0) + 1
  row[sum] = (row[sum] or 0) + ms
  row[bucket] = (row[bucket] or 0) + 1
end

-- The 5 s window of `now` and its field prefix, built once a call: turning
-- numbers into text is most of what building a field costs.
local function metric_seconds(now)
  local r = METRIC_ROLLUPS[1]
  local window = math.floor(now / r[2])
  return window, r[1] .. string.format('%d', window % r[3]) .. '|'
end

-- The field of a name's window in rollup r.
local function metric_field(r, window, name)
  return r[1] .. string.format('%d', window % r[3]) .. '|' .. name
end

-- Add value `from` (a closed 5 s window) into the stored `raw` of rollup
-- window `window`, which starts afresh when the slot held an older one.
local function metric_fold(raw, window, from)
  local v = raw and cmsgpack.unpack(raw)
  if not v or v[MV.window] ~= window then v = { window } end
  for at, n in pairs(from) do
    if at ~= MV.window then v[at] = (v[at] or 0) + n end
  end
  return cmsgpack.pack(v)
end

-- Write a tally: one HMGET, one HSET (and, for a newly seen name, an HGET
-- and the HSET of the names list). Only the totals and the 5 s rollup are
-- written each call; the totals' window position holds the name's newest
-- 5 s window, and the call that first writes a newer one folds that closed
-- window into the 1 min and 1 h rollups (one HMGET more, once per name and
-- 5 s window). Readers of those rollups add the still open window from the
-- 5 s ring (driver/src/metrics/pending.rs).
local function tally_write(t, now)
  if #t.order == 0 then return end
  local window, prefix = metric_seconds(now)
  local fields = { '#', 't|(other)', prefix .. '(other)' }
  for _, name in ipairs(t.order) do
    fields[#fields + 1] = 't|' .. name
    fields[#fields + 1] = prefix .. name
  end
  local stored = redis.call('HMGET', K.metrics, unpack(fields))
  local admitted = tonumber(stored[1]) or 0
  local value_of = {}
  for i = 2, #fields do value_of[fields[i]] = stored[i] end
  -- Resolve names: admit new ones while there is room, fold the rest into
  -- "(other)". Each row is copied (merged) into a fresh table, so a value
  -- is updated in the same key order, hence packed to the same bytes, as
  -- whichever names were folded together.
  local rows, order, added = {}, {}, {}
  for _, name in ipairs(t.order) do
    local known = name == '(other)' or value_of['t|' .. name]
    if not known and admitted < METRIC_NAMES_MAX then
      admitted = admitted + 1
      added[#added + 1] = name
      known = true
    end
    local as = known and name or '(other)'
    local into = rows[as]
    if not into then
      into = {}
      rows[as] = into
      order[#order + 1] = as
    end
    for at, n in pairs(t.rows[name]) do into[at] = (into[at] or 0) + n end
  end
  local writes, closed = {}, {}
  for _, name in ipairs(order) do
    local row = rows[name]
    local total = value_of['t|' .. name]
    total = total and cmsgpack.unpack(total) or { 0 }
    local newest = total[MV.window] or 0
    if newest ~= 0 and newest ~= window then closed[#closed + 1] = { name, newest } end
    total[MV.window] = window
    local field = prefix .. name
    local raw = value_of[field]
    local v = raw and cmsgpack.unpack(raw)
    if not v or v[MV.window] ~= window then v = { window } end
    for at, n in pairs(row) do
      total[at] = (total[at] or 0) + n
      v[at] = (v[at] or 0) + n
    end
    writes[#writes + 1] = 't|' .. name
    writes[#writes + 1] = cmsgpack.pack(total)
    writes[#writes + 1] = field
    writes[#writes + 1] = cmsgpack.pack(v)
  end
  if #closed > 0 then
    -- Each closed window is still in its 5 s slot: only a write of a newer
    -- window of the same name (this one) could have replaced it.
    local folds = {}
    for _, c in ipairs(closed) do
      local name, w = c[1], c[2]
      folds[#folds + 1] = metric_field(METRIC_ROLLUPS[1], w, name)
      for i = 2, #METRIC_ROLLUPS do
        local r = METRIC_ROLLUPS[i]
        folds[#folds + 1] = metric_field(r, math.floor(w * METRIC_ROLLUPS[1][2] / r[2]), name)
      end
    end
    local got = redis.call('HMGET', K.metrics, unpack(folds))
    local per = #METRIC_ROLLUPS
    for k, c in ipairs(closed) do
      local base = (k - 1) * per
      local from = got[base + 1] and cmsgpack.unpack(got[base + 1])
      if from and from[MV.window] == c[2] then
        for i = 2, per do
          local r = METRIC_ROLLUPS[i]
          writes[#writes + 1] = folds[base + i]
          writes[#writes + 1] = metric_fold(got[base + i],
            math.floor(c[2] * METRIC_ROLLUPS[1][2] / r[2]), from)
        end
      end
    end
  end
  if #added > 0 then
    local names = redis.call('HGET', K.metrics, 'names')
    names = names and cmsgpack.unpack(names) or {}
    for _, name in ipairs(added) do names[#names + 1] = name end
    writes[#writes + 1] = '#'
    writes[#writes + 1] = admitted
    writes[#writes + 1] = 'names'
    writes[#writes + 1] = cmsgpack.pack(names)
  end
  redis.call('HSET', K.metrics, unpack(writes))
end

-- One outcome of one job, written at once (the scripts that handle one job).
local function count_outcome(name, what, now)
  local t = tally_new()
  tally_count(t, name, what)
  tally_write(t, now)
end

-- The due time and name of a stored record (fields 1 to 16 decoded, not the
-- rest: a claim's records were just spliced, not decoded).
local function due_and_name(raw)
  if string.sub(raw, 1, 3) ~= RECORD_HEADER then
    local m = split_record(raw)
    return m[M.not_before], m[M.name]
  end
  -- unpack_limit returns the offset it stopped at, then the fields: from
  -- not_before on through select, not a table of all of them (a table a job
  -- costs about 2 000 instructions); name is the fourth field after it (M:
  -- fields never move).
  local due, _, _, _, name = select(M.not_before + 1, cmsgpack.unpack_limit(raw, M.name, 3))
  return due, name
end

-- A claim's waits: `leased` is lease_jobs's flat list (id, record, ...).
-- Wait = the claim's now - when the job was due (not_before: set at enqueue,
-- and again whenever a retry, release or requeue puts the job back).
local function record_waits(leased, now)
  if #leased == 0 then return end
  local t = tally_new()
  for i = 2, #leased, 2 do
    local due, name = due_and_name(leased[i])
    tally_time(t, name, 'wait', math.max(0, now - due))
  end
  tally_write(t, now)
end

-- An ack's completions: the jobs whose code is 1, with their run_ms when the
-- worker sent one (records as HMGET read them, before they were deleted).
local function record_acks(records, codes, runs, now)
  local t = tally_new()
  for i = 1, #codes do
    -- Only an acknowledged job with its record has a name to file it under.
    if codes[i] == 1 and records[i] then
      local _, name = due_and_name(records[i])
      tally_count(t, name, MV.completed)
      if runs[i] then tally_time(t, name, 'run', runs[i]) end
    end
  end
  tally_write(t, now)
end
