-- lib/metrics.lua: wait and run times and outcome counts per queue and job
-- name, in rollups and monotonic totals, all in one hash per queue:
-- K.metrics, {ns}:q:Q:metrics (the driver reads it: driver/src/metrics/).
-- include: keys metrics_fold
--
-- Fields of K.metrics:
--   "#"              how many job names are admitted (at most METRIC_NAMES_MAX)
--   "names"          msgpack array of the admitted names, in admission order
--   "w|<name>"       the name's open 5 s window (an integer): the newest one
--                    written, not yet folded into the totals and the 1 min
--                    and 1 h rollups
--   "t|<name>"       totals of the name's closed 5 s windows, never reset;
--                    its window position is 0. A reader adds the open window
--                    from the 5 s ring (driver/src/metrics/totals.rs), in the
--                    same HMGET as the totals and the marker: exact at any
--                    moment (Prometheus counters)
--   "<r><slot>|<name>"  rollup r ('s' 5 s, 'm' 1 min, 'h' 1 h), slot = window % slots
--   "handoffs_lost"  how many jobs handed to a parked worker it gave back
--                    because their messages never reached it (release.lua's
--                    handoff_lost form): the queue's, since it began, never
--                    reset, counted while the metrics are off too. Not per
--                    name, so readers of the layout before it never meet it
--   "claims_lost"    the same for jobs a worker's claim leased whose reply
--                    never reached it (release.lua's claim_lost form)
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
-- Cost: a call is one HMGET (the marker and the 5 s slot of each name) and
-- one HSET (the 5 s slot): one value unpacked and packed per name. The first
-- write of a name's newer 5 s window folds the closed one into the totals
-- and the 1 min and 1 h rollups (one HMGET more, once per name and window)
-- and moves the marker; a name without a marker (new, past the cap, or
-- written by the earlier layout) costs one HMGET more, and a new one an HGET
-- of the names list.
-- The earlier layout (before redq's stop 18) had no "w|" field: its "t|"
-- held the whole totals, open window included, and its window position the
-- newest 5 s window (0 in the layout before that, which wrote every rollup
-- each call). Readers take such a "t|" as the whole totals. A name's first
-- write adopts it (metric_adopt): the open window, if it is the current
-- one, is taken out of the totals (readers add it back from the 5 s ring);
-- an older one is folded into the 1 min and 1 h rollups only, the totals
-- holding it already. Nothing of the earlier layout is left after that
-- write, so nothing is kept for it but that one adoption.
-- The fold and the admission of names without a marker are
-- lib/metrics_fold.lua's: most calls run none of them, and a call builds a
-- module's functions on its first use of one (driver/src/scripts/compose.rs).

local METRIC_NAMES_MAX = 100
local METRIC_BUCKETS = 24 -- bucket b holds times <= 2^b ms (b < 23); 23 holds the rest
local METRIC_ROLLUPS = {
  { 's', 5000, 192 },      -- 5 s windows for 16 min
  { 'm', 60000, 1440 },    -- 1 min windows for 24 h
  { 'h', 3600000, 2160 },  -- 1 h windows for 90 days
}
local MV = {
  window = 1,      -- the window's number (its start / its width); 0 in the totals
  completed = 2, retried = 3, dead = 4, cancelled = 5, reclaimed = 6,
  wait_count = 7, wait_sum = 8, wait_bucket = 9,   -- buckets 9 .. 32
  run_count = 33, run_sum = 34, run_bucket = 35,   -- buckets 35 .. 58
}
local METRIC_LEN = 58
-- Present while the queue's metrics are off (metrics_switch.lua): the
-- Redis time, unix ms, they were turned off. Read in the same HMGET as the
-- name's window, so a queue whose metrics are on pays one field more.
local METRIC_OFF = 'off'

-- A tally collects one call's changes: name -> { [MV position] = delta }.
local function tally_new()
  return { rows = {}, order = {} }
end

-- The name a job is filed under.
local function tally_name(name)
  if name == '' then return '(none)' end
  return name
end

local function tally_row(t, name)
  name = tally_name(name)
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

-- Record `n` times (1 when nil) of `ms` each in a tally's row: `at` is the
-- kind's count position (MV.wait_count or MV.run_count), its sum and then
-- its buckets follow it. Bucket b holds the times ms <= 2^b (the least such
-- b), at most METRIC_BUCKETS - 1. Callers keep a batch's row while the name
-- repeats: a lookup and three calls a job cost about 1.5k instructions.
local function tally_time(row, at, ms, n)
  n = n or 1
  local b = 0
  if ms > 1 then
    local mantissa, exponent = math.frexp(ms)
    b = exponent
    if mantissa == 0.5 then b = exponent - 1 end
    if b >= METRIC_BUCKETS then b = METRIC_BUCKETS - 1 end
  end
  b = at + 2 + b
  row[at] = (row[at] or 0) + n
  row[at + 1] = (row[at + 1] or 0) + n * ms
  row[b] = (row[b] or 0) + n
end

-- A name's first write after the earlier layout (see the header): its
-- totals `old` (which hold its newest 5 s window `newest` too) become the
-- totals of its closed windows; returns the open window's value to add to
-- when that window is this one (`slot` holds it), else nil.
local function metric_adopt(name, old, slot, window, closing, writes)
  local total = cmsgpack.unpack(old)
  local newest = total[MV.window] or 0
  local v = slot and cmsgpack.unpack(slot)
  if v and v[MV.window] == window and newest == window then
    for at, n in pairs(v) do
      if at ~= MV.window then
        local left = (total[at] or 0) - n
        if left > 0 then total[at] = left else total[at] = nil end
      end
    end
  else
    v = nil
    if newest ~= 0 and newest ~= window then closing[#closing + 1] = { name, newest, true } end
  end
  total[MV.window] = 0
  writes[#writes + 1] = 't|' .. name
  writes[#writes + 1] = cmsgpack.pack(total)
  return v
end

-- The field prefix of the 5 s window a tally last wrote: turning numbers
-- into text is most of what building a field costs (string.format and two
-- concatenations, about 3k instructions), and a function library keeps the
-- prefix from one call to the next for as long as its window lasts.
-- composed memo: metric_prefix (a cache of the last window's field prefix)
local metric_prefix

-- Write a tally (see the header for what a call reads and writes).
local function tally_write(t, now)
  local names = t.order
  if #names == 0 then return end
  local seconds = METRIC_ROLLUPS[1]
  local window = math.floor(now / seconds[2])
  local memo = metric_prefix
  if not memo or memo.window ~= window then
    memo = { window = window, prefix = seconds[1] .. string.format('%d', window % seconds[3]) .. '|' }
    metric_prefix = memo
  end
  local prefix = memo.prefix
  local stored
  if #names == 1 then
    -- The usual call, one job name in a window it has written already:
    -- no list of fields or of writes (about 5k instructions).
    local name = names[1]
    local field = prefix .. name
    stored = redis.call('HMGET', K.metrics, 'w|' .. name, field, METRIC_OFF)
    if stored[3] then return end
    local v = tonumber(stored[1]) == window and stored[2] and cmsgpack.unpack(stored[2])
    if v and v[MV.window] == window then
      for at, n in pairs(t.rows[name]) do v[at] = (v[at] or 0) + n end
      redis.call('HSET', K.metrics, field, cmsgpack.pack(v))
      return
    end
  else
    local fields = {}
    for i, name in ipairs(names) do
      fields[2 * i - 1] = 'w|' .. name
      fields[2 * i] = prefix .. name
    end
    fields[#fields + 1] = METRIC_OFF
    stored = redis.call('HMGET', K.metrics, unpack(fields))
    if stored[#fields] then return end
  end
  local rows, olds, added, admitted = t.rows, nil, nil, nil
  for i = 1, #names do
    if not stored[2 * i - 1] then
      rows, names, stored, olds, added, admitted = metric_resolve(t, stored, prefix, METRIC_NAMES_MAX)
      break
    end
  end
  local writes, closing = {}, {}
  for i, name in ipairs(names) do
    local mark, slot = tonumber(stored[2 * i - 1]), stored[2 * i] or nil
    local v
    if mark == window then
      v = slot and cmsgpack.unpack(slot)
      if v and v[MV.window] ~= window then v = nil end
    elseif mark then
      closing[#closing + 1] = { name, mark, false }
    elseif olds[name] then
      v = metric_adopt(name, olds[name], slot, window, closing, writes)
    end
    if not v or mark ~= window then
      writes[#writes + 1] = 'w|' .. name
      writes[#writes + 1] = window
      v = v or { window }
    end
    for at, n in pairs(rows[name]) do v[at] = (v[at] or 0) + n end
    writes[#writes + 1] = prefix .. name
    writes[#writes + 1] = cmsgpack.pack(v)
  end
  if #closing > 0 then metric_close(closing, writes, METRIC_ROLLUPS, MV.window) end
  if added and #added > 0 then
    local list = redis.call('HGET', K.metrics, 'names')
    list = list and cmsgpack.unpack(list) or {}
    for _, name in ipairs(added) do list[#list + 1] = name end
    writes[#writes + 1] = '#'
    writes[#writes + 1] = admitted
    writes[#writes + 1] = 'names'
    writes[#writes + 1] = cmsgpack.pack(list)
  end
  redis.call('HSET', K.metrics, unpack(writes))
end

-- One outcome of one job, written at once (the scripts that handle one job).
local function count_outcome(name, what, now)
  local t = tally_new()
  tally_count(t, name, what)
  tally_write(t, now)
end

-- A claim's waits: `waits` is lease_jobs's second list (lib/lease.lua: due
-- time, name, per job leased, in order), which it decodes with the lease.
-- Wait = the claim's now - when the job was due (not_before: set at enqueue,
-- and again whenever a retry, release or requeue puts the job back). Jobs
-- enqueued by one call share their due time, so a batch leases runs of
-- equal waits: each run is tallied once (a bucket's frexp and three row
-- updates a job cost about 1.5k instructions).
local function record_waits(waits, now)
  local count = #waits
  if count == 0 then return end
  if count == 2 then
    -- One job (a lone claim or hand-off): its tally made at once.
    local ms, name, row = now - waits[1], tally_name(waits[2]), {}
    if ms < 0 then ms = 0 end
    tally_time(row, MV.wait_count, ms)
    tally_write({ rows = { [name] = row }, order = { name } }, now)
    return
  end
  local t = tally_new()
  local row, last, run, run_ms
  for i = 1, #waits, 2 do
    local name = waits[i + 1]
    local ms = now - waits[i]
    if ms < 0 then ms = 0 end
    if name ~= last or ms ~= run_ms then
      if run then tally_time(row, MV.wait_count, run_ms, run) end
      if name ~= last then
        row, last = tally_row(t, name), name
      end
      run, run_ms = 1, ms
    else
      run = run + 1
    end
  end
  tally_time(row, MV.wait_count, run_ms, run)
  tally_write(t, now)
end

-- An ack's completions: `names[i]` is the name of the i-th job of the
-- call when it was acknowledged (nil when not: only an acknowledged job with
-- its record has a name to file it under), with its run_ms in `runs[i]`
-- when the worker sent one. The ack decoded the names with the records'
-- heads (lua/ack.lua): decoding them here again cost 3 to 5k instructions
-- a job.
local function record_acks(names, runs, n, now)
  local t = tally_new()
  local row, last
  for i = 1, n do
    local name = names[i]
    if name then
      if name ~= last then
        row, last = tally_row(t, name), name
      end
      row[MV.completed] = (row[MV.completed] or 0) + 1
      if runs[i] then tally_time(row, MV.run_count, runs[i]) end
    end
  end
  tally_write(t, now)
end
