-- lib/clock.lua: Redis's clock, the one every stored time is measured on
-- (workers' clocks may disagree with it and with each other).
-- composed eager: every call that reads the clock does so early (driver/src/scripts/compose.rs)

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
