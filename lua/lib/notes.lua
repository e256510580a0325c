-- lib/notes.lua: a job's notes, what its handler reported while it ran: the
-- latest progress (K.progress, id -> JSON text, the latest wins) and its
-- last log lines (K.logs, id -> the lines, each ended by "\n", oldest first).
--
-- The record's `noted` field (lib/job_record.lua) is 1 once a job has notes,
-- so the places a job leaves for good forget them only then: an ack of a job
-- without notes issues no note command. Notes survive a retry, a reclaim and
-- a dead-letter (they help diagnose the failure) and go with the job.
--
-- Bounds (driver/src/notes.rs holds the same numbers and cuts lines to fit
-- before sending; here they are enforced): progress at most 4096 bytes; a
-- line at most 1024 bytes; at most 100 lines and 16384 bytes a job, the
-- oldest lines dropped first.
-- include: check keys job_record

local MAX_PROGRESS_BYTES = 4096
local MAX_LINE_BYTES = 1024
local MAX_LOG_LINES = 100
local MAX_LOG_BYTES = 16384

-- Refuse notes out of bounds, before the caller's first write (lib/check.lua).
-- progress: JSON text, '' = unchanged; lines: "\n"-ended lines, '' = none.
local function check_notes(progress, lines)
  if type(progress) ~= 'string' or type(lines) ~= 'string' then fail('notes are missing') end
  if #progress > MAX_PROGRESS_BYTES then
    fail('progress must be at most ' .. MAX_PROGRESS_BYTES .. ' bytes, got ' .. #progress)
  end
  if lines == '' then return end
  if string.sub(lines, -1) ~= '\n' then fail('log lines must each end with a newline') end
  local from = 1
  while from <= #lines do
    local stop = string.find(lines, '\n', from, true)
    if stop - from > MAX_LINE_BYTES then
      fail('a log line must be at most ' .. MAX_LINE_BYTES .. ' bytes, got ' .. (stop - from))
    end
    from = stop + 1
  end
end

-- The last lines of `log` within the bounds. Counted with plain finds (a
-- C scan a line), not gsub, which runs the pattern matcher on every byte.
local function bounded_log(log)
  local count, at = 0, 0
  while true do
    at = string.find(log, '\n', at + 1, true)
    if not at then break end
    count = count + 1
  end
  local from = 1
  while count > MAX_LOG_LINES or #log - from + 1 > MAX_LOG_BYTES do
    from = string.find(log, '\n', from, true) + 1
    count = count - 1
  end
  if from == 1 then return log end
  return string.sub(log, from)
end

-- Store checked notes of job `id` and mark its record `m` noted (the caller
-- stores m). Costs one HSET for progress; one HGET and one HSET for lines.
local function write_notes(id, m, progress, lines)
  if progress == '' and lines == '' then return end
  if progress ~= '' then redis.call('HSET', K.progress, id, progress) end
  if lines ~= '' then
    local log = redis.call('HGET', K.logs, id) or ''
    redis.call('HSET', K.logs, id, bounded_log(log .. lines))
  end
  m[M.noted] = 1
end

-- Forget the notes of jobs leaving for good (a list of ids; callers pass
-- only the noted ones when they know). Two commands for the whole list.
local function forget_notes(ids)
  if #ids == 0 then return end
  redis.call('HDEL', K.progress, unpack(ids))
  redis.call('HDEL', K.logs, unpack(ids))
end
