-- lib/time_words.lua: times and spans as an operator reads them in an
-- event's detail, for the few scripts that write one (a skipped schedule
-- tick, a lost worker, a retention policy or dead-letter bound); lazy, so no
-- other call builds them.

-- A duration in the largest whole unit it is: 7d, 90m, 1500ms (the form
-- the CLI's flags take back).
local function duration_words(ms)
  for _, unit in ipairs({ { 86400000, 'd' }, { 3600000, 'h' }, { 60000, 'm' }, { 1000, 's' } }) do
    if ms % unit[1] == 0 then return string.format('%d%s', ms / unit[1], unit[2]) end
  end
  return string.format('%dms', ms)
end

-- `ms` (unix ms) as "YYYY-MM-DD HH:MM:SS UTC": the civil date from the day
-- number (H. Hinnant's days_from_civil, inverted); exact for every time up
-- to MAX_TIME_MS in Lua's doubles.
local function utc_text(ms)
  local secs = math.floor(ms / 1000)
  local days, of_day = math.floor(secs / 86400), secs % 86400
  local z = days + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524)
    - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local day = doy - math.floor((153 * mp + 2) / 5) + 1
  local month = mp < 10 and mp + 3 or mp - 9
  local year = yoe + era * 400 + (month <= 2 and 1 or 0)
  return string.format('%04d-%02d-%02d %02d:%02d:%02d UTC', year, month, day,
    math.floor(of_day / 3600), math.floor(of_day / 60) % 60, of_day % 60)
end

-- A lateness in ms, in the unit a person reads it in: "75 s", "3 min", "5 h", "3 days".
local function lateness_text(ms)
  local secs = math.floor(ms / 1000)
  if secs < 120 then return secs .. ' s' end
  if secs < 7200 then return math.floor(secs / 60) .. ' min' end
  if secs < 172800 then return math.floor(secs / 3600) .. ' h' end
  return math.floor(secs / 86400) .. ' days'
end
