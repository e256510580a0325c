-- lib/check.lua: argument validation. Every script checks all of its input
-- before its first write, so a refused call changes nothing.
--
-- A refusal is error({err = 'ERR redq: ...'}): a plain sentence naming the
-- bad argument, which the driver reports as "script refused input: ...".
-- composed eager: every script checks its arguments first (driver/src/scripts/compose.rs)

-- Upper bounds shared with driver/src/limits.rs (validated there first).
local MAX_MS = 315360000000          -- ten years in milliseconds
local MAX_TIME_MS = 140737488355328  -- 2^47 ms: year 6429
local MAX_U32 = 4294967295

local function fail(msg)
  error({err = 'ERR redq: ' .. msg})
end

-- A variant of `script` (lua/README.md, "Variants") refuses a call that
-- needs a key it lacks, before the call writes. The refusal's first words
-- are what the driver looks for (driver/src/scripts/variant_route.rs)
-- to send such a call to the whole script.
local function variant_refused(script, what)
  fail('variant refused: this variant of ' .. script .. ' takes no call with ' .. what
    .. ': the driver sends such calls to the whole script')
end

-- Whole numbers only: tonumber would also accept "nan", "inf", "0x10",
-- " 12" and "1e3". Sixteen digits keep every value exact in a Lua double.
local function uint(v, what, max)
  -- Most numeric arguments are "0" (option not set): skip the pattern match.
  if v == '0' then return 0 end
  -- Then "1": the count of a lone job's enqueue, claim or ack (the pattern
  -- match and tonumber cost about 2.5k instructions; a compare of interned
  -- strings next to nothing).
  if v == '1' and max >= 1 then return 1 end
  if type(v) ~= 'string' or #v == 0 or #v > 16 or not string.match(v, '^%d+$') then
    fail(what .. ' must be a whole number, got ' .. string.format('%q', tostring(v)))
  end
  local n = tonumber(v)
  if n > max then
    fail(what .. ' must be at most ' .. string.format('%d', max) .. ', got ' .. v)
  end
  return n
end

-- Text that becomes part of a lex member or a hash field: bounded and free of
-- control characters (the lex members use "\n" as their separator).
local function text(v, what, max_len)
  -- Most text arguments are "" (option not set): skip the pattern search.
  if v == '' then return v end
  -- cjson.encode escapes every control character (and besides them only
  -- '"', '/' and '\\'), so an encoding only two bytes (its quotes) longer
  -- than v proves v has none, at a third of the cost of the pattern search
  -- (about 1.6k instructions against 4.5k for a 26-byte id), which decides
  -- when it is longer.
  if type(v) ~= 'string' or #v > max_len or (#cjson.encode(v) ~= #v + 2 and string.find(v, '%c')) then
    fail(what .. ' must be at most ' .. max_len .. ' bytes without control characters')
  end
  return v
end

-- Every text of `list` as text() checks one, the control characters of them
-- all in one check: cjson.encode of them joined costs a fraction of an
-- encode each (about 2.3k instructions a 26-byte job id of a 100-job
-- enqueue, callgrind), and the pattern search decides only when some text
-- has a '"', '/' or '\\'. Their lengths are the caller's to check (only
-- the length check is cheap one by one); a refusal names the first bad one.
local function texts(list, what, max_len)
  local all = #list == 1 and list[1] or table.concat(list)
  if #cjson.encode(all) ~= #all + 2 and string.find(all, '%c') then
    for i = 1, #list do text(list[i], what, max_len) end
  end
end

-- The last queue name that passed: a function library keeps it from one
-- call to the next, and a worker or producer calls with one queue, whose
-- name is then checked with a compare of interned strings instead of the
-- pattern search (about 3k instructions on every queue script's call).
-- composed memo: queue_name_passed (a cache of the last name this check passed)
local queue_name_passed

local function queue_name(v)
  if v == queue_name_passed then return v end
  if type(v) ~= 'string' or #v == 0 or #v > 128 or string.find(v, '[%c{}:]') then
    fail('queue name must be 1 to 128 bytes without control characters or { } :')
  end
  queue_name_passed = v
  return v
end

-- A decimal u64 kept as text (worker node ids, park tokens): Lua doubles
-- cannot hold every u64, so it is compared as a string, never converted.
local U64_MAX = '18446744073709551615'

-- A u64 kept as its decimal text (Lua numbers are doubles): 1 to 20 digits,
-- at most U64_MAX (two texts of 20 digits compare as their numbers).
local function decimal_u64(v, what)
  if type(v) ~= 'string' or #v == 0 or #v > 20 or not string.match(v, '^%d+$')
      or (#v == 20 and v > U64_MAX) then
    fail(what .. ' must be a decimal u64 (0 to ' .. U64_MAX .. ')')
  end
  return v
end
