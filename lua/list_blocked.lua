#!lua flags=no-writes,allow-oom
-- list_blocked.lua: one step of a listing of a queue's blocked jobs, each
-- queued behind the holder of its ordering key (lib/ordering.lua `admit`),
-- by ordering key, then in the order they will run.
--
-- An ordering key crosses queues, so every queue's blocked jobs share the
-- namespace's ord:blocked, ordered by key, not by queue: this queue's are
-- found by walking it from a cursor, at most 1000 members a call, each
-- member's record read for its queue. A call passes over the first `skip`
-- of this queue's jobs it meets, then returns up to `count` of them and
-- where the walk goes on; the driver calls again until its page is full or
-- the set is walked (driver/src/blocked.rs). So a page is not one snapshot:
-- a job blocked or released between two calls may be missed or listed
-- once more. When every blocked job of the namespace is this queue's (its
-- count is the set's size), the first call starts at rank `skip` at once.
-- include: check clock keys job_record listed_job
-- KEYS: the queue key list (lua/lib/keys.lua), of which this script
--   reads  jobs, detached, ord_blocked, ord_blocked_n
--   writes nothing
-- ARGV[1] queue name   ARGV[2] wake-up channel
-- ARGV[3] cursor: "" to start, else the next_cursor of the call before (a
--         member of ord:blocked, "key\nseq16\nid"; the walk goes on after it)
-- ARGV[4] skip: this queue's blocked jobs to pass over before the page (0..2^32-1)
-- ARGV[5] count (1..1000): most jobs returned
-- Reply: { total, now_ms, next_cursor, skipped, id1, score1, meta1, payload1, ... }
--   total: the queue's blocked jobs (ord:blocked:n); next_cursor: "" once
--   the set is walked to its end; skipped: how many jobs of `skip` this call
--   passed over; score: always "0" (a blocked job has no claim-order score
--   until its key passes to it).
queue_name(QUEUE)
local cursor = ARGV[3]
-- A member of ord:blocked (key, seq, id with "\n" between), so not text();
-- 600 bytes as delete_job.lua's cursor into the same set.
if type(cursor) ~= 'string' or #cursor > 600 then fail('cursor must be at most 600 bytes') end
local skip = uint(ARGV[4], 'skip', MAX_U32)
local count = uint(ARGV[5], 'count', 1000)
if count < 1 then fail('count must be 1 to 1000') end
-- Members examined a call: what bounds the call, whatever it finds.
local EXAMINE = 1000

local total = tonumber(redis.call('HGET', K.ord_blocked_n, QUEUE) or '0')
local reply = { total, now_ms(), '', 0 }
local size = redis.call('ZCARD', K.ord_blocked)
local members
if cursor == '' and size == total then
  -- Only this queue's jobs are blocked: rank is position in its listing.
  local from = math.min(skip, size)
  reply[4] = from
  skip = 0
  members = redis.call('ZRANGE', K.ord_blocked, from, from + EXAMINE - 1)
else
  local from = cursor == '' and '-' or '(' .. cursor
  members = redis.call('ZRANGEBYLEX', K.ord_blocked, from, '+', 'LIMIT', 0, EXAMINE)
end
local listed = 0
for _, member in ipairs(members) do
  -- The id is after the member's last "\n" (an id holds none).
  local id = string.match(member, '\n([^\n]*)$')
  local raw = id and redis.call('HGET', K.jobs, id)
  if raw and split_record(raw)[M.queue] == QUEUE then
    if skip > 0 then
      skip = skip - 1
      reply[4] = reply[4] + 1
    else
      append_listed(reply, id, '0', raw)
      listed = listed + 1
      if listed == count then
        reply[3] = member
        break
      end
    end
  end
end
if reply[3] == '' and #members == EXAMINE then reply[3] = members[#members] end
return reply
