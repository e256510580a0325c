-- lib/listed_job.lua: a job as the listing scripts reply it (list_jobs,
-- list_blocked): its id, its score, its packed meta and its payload, sent
-- apart as the reply has always been. driver/src/admin.rs `listed_rows`
-- reads these four-item rows, the one reader of both scripts' pages.
-- include: detached

-- Append job `id` with `score` (text) to `reply`, from its stored record
-- `raw` (false when the job is gone: meta and payload are then '', which the
-- reader skips).
local function append_listed(reply, id, score, raw)
  local meta, payload = '', ''
  if raw then
    local used = cmsgpack.unpack_one(raw)
    if used < 0 then meta = raw else meta, payload = string.sub(raw, 1, used), string.sub(raw, used + 1) end
    payload = whole_payload(id, payload)
  end
  reply[#reply + 1] = id
  reply[#reply + 1] = score
  reply[#reply + 1] = meta
  reply[#reply + 1] = payload
end
