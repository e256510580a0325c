-- lib/promote.lua: moving jobs whose time has come into the waiting order,
-- done by each claim before it pops: scheduled jobs (delays, retries) now
-- due, and ordering-key successors released into {ns}:ord:ready, where a
-- fired gate also puts its waiters (decided here, lib/gate_decide.lua).
-- include: check keys job_record job_store waiting gate gate_decide

-- Up to `limit` scheduled jobs due by `now` become waiting (or held, lib/waiting.lua `place`).
-- Each of these counts first: a count costs about half a scan that finds
-- nothing, and most claims find nothing.
local function promote_scheduled(now, limit)
  if redis.call('ZCOUNT', K.scheduled, '-inf', now) == 0 then return end
  -- claim.lua's variant (its header) lacks the keys of a job held by its
  -- limit key (lib/waiting.lua place); the loop writes as it goes, so the
  -- variant refuses any due job rather than look at each first.
  if not K.lim_held then variant_refused('claim', 'scheduled jobs now due') end
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', K.scheduled, '-inf', now, 'LIMIT', 0, limit)) do
    redis.call('ZREM', K.scheduled, id)
    local m = load_meta(id)
    if m then place(id, m, now, now) end
  end
end

-- Up to `limit` released successors of this queue enter it, due at their
-- not_before time; a waiter of a fired (or cancelled) gate, still in
-- wf:awaiting, is decided instead. An entry of a job without `awaits` costs
-- nothing more.
local function promote_ready(now, limit)
  local from, to = '[' .. QUEUE .. '\n', '(' .. QUEUE .. '\11'
  if redis.call('ZLEXCOUNT', K.ord_ready, from, to) == 0 then return end
  -- claim.lua's variant lacks the keys of a gate's waiter (decided below)
  -- and of a held job: refused as a due scheduled job is, above.
  if not K.wf_awaiting then variant_refused('claim', 'ordering successors released') end
  for _, member in ipairs(redis.call('ZRANGEBYLEX', K.ord_ready, from, to, 'LIMIT', 0, limit)) do
    redis.call('ZREM', K.ord_ready, member)
    local id = string.sub(member, #QUEUE + 19)
    local m = load_meta(id)
    if m then
      if wf.is_awaiting(id, m) then wf_waiter.decide(id, m, now)
      else place(id, m, m[M.not_before], now) end
    end
  end
end
