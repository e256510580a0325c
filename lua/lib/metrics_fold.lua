-- lib/metrics_fold.lua: what a write of lib/metrics.lua's tallies does
-- beyond adding to a name's open 5 s window (lib/metrics.lua's header
-- describes the layout): folding a closed window into the totals and the
-- rollups, and admitting names without a marker. Apart from lib/metrics.lua
-- because most calls need neither, and a call builds a module's functions
-- on its first use of one (driver/src/scripts/compose.rs). lib/metrics.lua
-- defines the layout and hands it to these functions: `rollups` is its
-- METRIC_ROLLUPS, `window_at` its MV.window, `names_max` its
-- METRIC_NAMES_MAX. (The earlier layout's adoption, as rare, stays in
-- lib/metrics.lua: the driver's test of the layout,
-- driver/src/metrics/layout.rs, finds the totals field there.)
-- include: keys

-- The field of a name's window in rollup r.
local function metric_field(r, window, name)
  return r[1] .. string.format('%d', window % r[3]) .. '|' .. name
end

-- Add value `from` (a closed 5 s window) into the stored `raw` of window
-- `window` (0 for the totals), which starts afresh when the slot held an
-- older one.
local function metric_fold(raw, window, from, window_at)
  local v = raw and cmsgpack.unpack(raw)
  if not v or v[window_at] ~= window then v = { window } end
  for at, n in pairs(from) do
    if at ~= window_at then v[at] = (v[at] or 0) + n end
  end
  return cmsgpack.pack(v)
end

-- Fold each closed 5 s window of `closing` ({ name, window, adopted }) into
-- the name's totals (unless `adopted`: earlier-layout totals that hold it
-- already) and its 1 min and 1 h rollups; the fields go to `writes`. The
-- closed window is still in its 5 s slot: only a write of a newer window
-- of the same name (this call's) could have replaced it.
local function metric_close(closing, writes, rollups, window_at)
  local seconds = rollups[1]
  local per = #rollups + 1
  local fields = {}
  for _, c in ipairs(closing) do
    local name, w = c[1], c[2]
    fields[#fields + 1] = metric_field(seconds, w, name)
    fields[#fields + 1] = 't|' .. name
    for i = 2, #rollups do
      local r = rollups[i]
      fields[#fields + 1] = metric_field(r, math.floor(w * seconds[2] / r[2]), name)
    end
  end
  local got = redis.call('HMGET', K.metrics, unpack(fields))
  for k, c in ipairs(closing) do
    local base = (k - 1) * per
    local from = got[base + 1] and cmsgpack.unpack(got[base + 1])
    if from and from[window_at] == c[2] then
      if not c[3] then
        writes[#writes + 1] = fields[base + 2]
        writes[#writes + 1] = metric_fold(got[base + 2], 0, from, window_at)
      end
      for i = 2, #rollups do
        local r = rollups[i]
        writes[#writes + 1] = fields[base + i + 1]
        writes[#writes + 1] = metric_fold(got[base + i + 1],
          math.floor(c[2] * seconds[2] / r[2]), from, window_at)
      end
    end
  end
end

-- The names of a call when some have no marker (see the header): admit new
-- ones while there is room, fold the rest into "(other)". Returns the rows
-- by name, the names in order, their stored marker and 5 s slot (flat, as
-- the first HMGET gives them), the earlier-layout totals of names that have
-- some, and the names admitted. Each row is copied (merged) into a fresh
-- table, so names folded together update a value in one key order.
local function metric_resolve(t, stored, prefix, names_max)
  local order = t.order
  local ask = { '#', 'w|(other)', prefix .. '(other)', 't|(other)' }
  for i, name in ipairs(order) do
    if not stored[2 * i - 1] then ask[#ask + 1] = 't|' .. name end
  end
  local got = redis.call('HMGET', K.metrics, unpack(ask))
  local admitted = tonumber(got[1]) or 0
  local earlier = { ['(other)'] = got[4] }
  local k = 4
  for i, name in ipairs(order) do
    if not stored[2 * i - 1] then
      k = k + 1
      earlier[name] = got[k]
    end
  end
  local rows, names, found, olds, added = {}, {}, {}, {}, {}
  for i, name in ipairs(order) do
    local mark, slot = stored[2 * i - 1], stored[2 * i]
    local as = name
    if not mark and name ~= '(other)' and not earlier[name] then
      if admitted < names_max then
        admitted = admitted + 1
        added[#added + 1] = name
      else
        as, mark, slot = '(other)', got[2], got[3]
      end
    end
    local into = rows[as]
    if not into then
      into = {}
      rows[as] = into
      names[#names + 1] = as
      found[#found + 1] = mark or false
      found[#found + 1] = slot or false
      if not mark then olds[as] = earlier[as] end
    end
    for at, n in pairs(t.rows[name]) do into[at] = (into[at] or 0) + n end
  end
  return rows, names, found, olds, added, admitted
end
