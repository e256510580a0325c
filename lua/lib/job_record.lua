-- lib/job_record.lua: the job record, defined once. A job's value in
-- {ns}:jobs is this msgpack array immediately followed by its payload (JSON
-- text, opaque to Lua): one hash entry a job instead of two saves about 70
-- bytes of Redis memory per job.
--
-- M is the schema: M.<field> is the field's position in the array (from 1),
-- one field a line in stored order. driver/build.rs reads this table (each
-- line `name = position,`), checks the positions run 1, 2, 3 ... and that
-- JOB_LEN counts them, and generates the Rust positions from it, so the
-- driver's decoder (driver/src/meta.rs) cannot drift from it. Every field
-- has a default ("" and 0 for "none"). It is a table literal because every
-- call of every script builds it: a literal costs a microsecond, building it
-- from a list several.
--
-- Stored lean: a record is packed without its trailing fields at their
-- defaults (down to OLDEST_JOB_LEN fields: the array is as long as its last
-- field that is not at its default), and a not_before equal to enqueued_at
-- (due when enqueued, most jobs) is stored as DUE_AT_ENQUEUE. split_record
-- gives back the whole record with the real due time, so no script sees the
-- difference. A fresh job's value drops from 76 to 60 bytes with its sds
-- header (payload {"i":12345}), out of jemalloc's 80-byte class into the
-- 64-byte one: 16 bytes a job.
--
-- The lease comes first and what an ack needs next: leasing rewrites only the
-- first four fields' bytes (lib/lease.lua) and an ack decodes only the first
-- eight (record_head), instead of the whole record each time. Those fast
-- paths take any header stored_length accepts. Appending a field changes the
-- longest header; moving one breaks stored records.
-- include: check

local M = {
  lease_id = 1,         -- the current lease (the fencing token), 0 = not leased
  lease_expiry = 2,     -- unix ms (Redis clock), 0 = not leased
  worker_node = 3,      -- text: the holder's node id (a decimal u64 kept as text)
  worker_instance = 4,  -- the holder's instance (u32)
  queue = 5,            -- text
  dedup_key = 6,        -- text, "" = none
  dedup_ttl = 7,        -- ms; 0 = the key is held while the job lives
  ordering_key = 8,     -- text, "" = none
  priority = 9,         -- 0..255, higher is claimed first
  seq = 10,             -- enqueue order (FIFO within a priority)
  enqueued_at = 11,     -- unix ms
  not_before = 12,      -- unix ms: due no earlier
  attempts = 13,        -- failed attempts so far
  max_attempts = 14,    -- 0 = unlimited
  retry_window = 15,    -- ms after enqueued_at a failure dead-letters; 0 = none
  name = 16,            -- text: job type name, "" = none
  error = 17,           -- text: the last failure's text
  died_at = 18,         -- unix ms it was dead-lettered, 0 = alive
  resolved_lease = 19,  -- see below
  backoff_base = 20,    -- ms: a reclaim's delay for the first lost lease; 0 = back at once
  backoff_cap = 21,     -- ms: the longest delay a reclaim waits (>= backoff_base)
  noted = 22,           -- 1 = the job has progress or log lines (lib/notes.lua)
  limit_key = 23,       -- text: the job's limit key within its queue (lib/flow.lua), "" = none
  trace = 24,           -- text: the producer's W3C traceparent (driver/src/trace), "" = none
  gate = 25,            -- text: the gate the job was created into as a member (lib/gate.lua), "" = none
  more_gates = 26,      -- how many wf:of entries the job has: gates it joined later (gate + these <= 100)
  awaits = 27,          -- text: the gate the job waits on, "" = none; kept after the decision
}
local JOB_LEN = 27
-- resolved_lease: the lease whose outcome was last recorded, so a resent
-- call is recognised: the lease id after a nack, minus the lease id after a
-- release, 0 after a reclaim or requeue.

-- Records written before the backoff, noted, limit_key, trace and workflow
-- fields existed have the first 19, 22, 23 or 24 fields only, and a lean
-- record (above) any length from 19 up. split_record gives them the missing
-- ones at their defaults, so every script sees a whole record.
-- driver/build.rs reads this too: the driver decodes records this long and up.
local OLDEST_JOB_LEN = 19

-- The stored not_before of a job due when it was enqueued: read back as its
-- enqueued_at by the decoders (split_record here, the splice's partial
-- decode in lib/lease.lua, and driver/src/meta.rs, which takes it from this
-- line through driver/build.rs). No job is due at the epoch: enqueue makes
-- not_before at least enqueued_at.
local DUE_AT_ENQUEUE = 0

-- Compact records: a format step a namespace opts into (its record format
-- marker, driver/src/record_format.rs; enqueue.lua's ARGV[7]). A fresh job
-- whose every field is at its default but these, due when it was enqueued
-- and not leased, is stored as a msgpack fixarray of these fields alone,
-- lean as above (3 to 5 of them): 17 bytes fewer than the 19-field array,
-- a waiting job's value in jemalloc's 48-byte class instead of the 64-byte
-- one for the bench's job (docs/performance.md, round eleven). Its first
-- byte (0x93 to 0x95) tells it from the array16 of every other record.
-- Only an enqueue writes one: every later write of the job (its lease
-- first) stores the whole layout, so a compact record is always a fresh,
-- waiting one. driver/build.rs reads the next three lines.
local COMPACT_FIELDS = { M.queue, M.seq, M.enqueued_at, M.name, M.max_attempts }
local COMPACT_LEN = 5
local COMPACT_MIN = 3

-- Every field at its default, built by the first new_record of a call (only
-- the scripts that create jobs pay for it).
-- composed memo: job_blank (the defaults, built at first use)
local job_blank

-- A new record, every field at its default ("" for the text fields, else 0);
-- the caller sets the fields it knows by name (m[M.queue] = ...; a misspelt
-- name fails as a nil index). Copying the defaults with one unpack costs
-- about 0.2 us a job more than writing the array out, the stores by name
-- about 0.3 us more (measured in a Lua loop on redis-server 7.0).
local function blank_record()
  if not job_blank then
    job_blank = {}
    for at = 1, JOB_LEN do job_blank[at] = 0 end
    job_blank[M.worker_node], job_blank[M.queue], job_blank[M.dedup_key] = '', '', ''
    job_blank[M.ordering_key], job_blank[M.name], job_blank[M.error] = '', '', ''
    job_blank[M.limit_key], job_blank[M.trace] = '', ''
    job_blank[M.gate], job_blank[M.awaits] = '', ''
  end
  return job_blank
end

local function new_record()
  return { unpack(blank_record(), 1, JOB_LEN) }
end

-- Detached records: a format step a namespace opts into (its record format
-- marker, driver/src/record_format.rs; enqueue.lua's ARGV[7]). A job whose
-- payload is at least the marker's size is stored as its meta alone, under
-- a msgpack array32 header (DETACHED_HEAD, then the length's four bytes)
-- where every other record has an array16 one, with its payload in
-- {ns}:detached (K.detached) under its id. Redis's Lua hashes every byte of
-- every string it makes (about 12.5k instructions a KB): a whole record's
-- payload becomes such a string about six times between its enqueue and
-- its ack (docs/performance.md, round twenty-six), a detached one's twice,
-- the enqueue's argument and the claim's read for the reply. The header
-- keeps it off the standard records' fast paths (stored_length takes only
-- array16; the claim splices a detached record's lease after
-- detached_length, every other script decodes one whole), so a record that
-- is not detached costs nothing more; split_record reads one as the meta with the
-- payload '' (no payload is empty), and encode_record of a payload ''
-- writes the header again, so the paths that change the meta alone
-- (lib/job_store.lua) keep a record detached and never touch its payload.
local DETACHED_HEAD = 221

-- The payload size from which a job is stored detached under record format
-- `format`, as the scripts that create jobs take it ("", "compact",
-- "detached:<bytes>" or "compact+detached:<bytes>", bytes 1 to 2^30:
-- driver/src/record_format.rs `wire`); nil for the formats that detach
-- nothing. The second value: whether the format stores compact records
-- (an enqueue's alone use it).
local function detach_from_format(format)
  if format == '' then return nil, false end
  if format == 'compact' then return nil, true end
  local compact = string.sub(format, 1, 8) == 'compact+'
  local size = string.match(compact and string.sub(format, 9) or format, '^detached:(%d+)$')
  local bytes = size and #size <= 10 and tonumber(size)
  if not bytes or bytes < 1 or bytes > 1073741824 then
    fail('record format must be "", compact, detached:<bytes> or compact+detached:<bytes> (<bytes> 1 to 1073741824), got '
      .. string.format('%q', tostring(format)))
  end
  return bytes, compact
end

-- The msgpack array16 header of a record of `len` fields (every length
-- stored is above 15), built once a length and call.
-- composed memo: record_headers (a header a length, built at first use)
local record_headers = {}
local function record_header(len)
  local header = record_headers[len]
  if not header then
    header = '\220\0' .. string.char(len)
    record_headers[len] = header
  end
  return header
end

-- The field count of stored record `raw` when it starts with a header this
-- module reads (OLDEST_JOB_LEN to JOB_LEN fields), else nil; and whether its
-- lease is the cleared one (0, 0, '', 0: the bytes 0 0 160 0), as it is
-- while the job is not leased. One C call reads the seven bytes.
local function stored_length(raw)
  local a, b, len, l1, l2, l3, l4 = string.byte(raw, 1, 7)
  if a == 220 and b == 0 and len >= OLDEST_JOB_LEN and len <= JOB_LEN then
    return len, l1 == 0 and l2 == 0 and l3 == 160 and l4 == 0
  end
  return nil, false
end

-- Whether stored record `raw` is detached (its payload in K.detached).
local function is_detached(raw)
  return string.byte(raw) == DETACHED_HEAD
end

-- The stored bytes of `meta`, a record's meta as encode_record packs it
-- (array16), made detached: the array32 header of the same length.
local function detached_meta(meta)
  return '\221\0\0' .. string.sub(meta, 2)
end

-- The array32 header of a detached record of `len` fields.
local function detached_header(len)
  return '\221\0\0\0' .. string.char(len)
end

-- stored_length for a detached record (its five-byte header, then the
-- lease): its field count and whether its lease is the cleared one; nil
-- and false for any other record.
local function detached_length(raw)
  local a, b, c, d, len, l1, l2, l3, l4 = string.byte(raw, 1, 9)
  if a == DETACHED_HEAD and b == 0 and c == 0 and d == 0 and len >= OLDEST_JOB_LEN and len <= JOB_LEN then
    return len, l1 == 0 and l2 == 0 and l3 == 160 and l4 == 0
  end
  return nil, false
end

-- How many fields of record `m` are stored: up to its last field that is
-- not at its default, and at least OLDEST_JOB_LEN.
local function lean_length(m)
  local blank, len = blank_record(), JOB_LEN
  while len > OLDEST_JOB_LEN and m[len] == blank[len] do len = len - 1 end
  return len
end

-- The stored bytes of a record: lean (see the top), m itself unchanged.
local function encode_record(m, payload)
  local len, due = lean_length(m), m[M.not_before]
  if due == m[M.enqueued_at] then m[M.not_before] = DUE_AT_ENQUEUE end
  local packed = record_header(len) .. cmsgpack.pack(unpack(m, 1, len))
  m[M.not_before] = due
  -- A payload '' is a detached record's (above: no payload is empty).
  if payload == '' then return detached_meta(packed) end
  return packed .. payload
end

-- COMPACT_FIELDS and not_before (each job's due time decides that part), as
-- a set of M positions.
-- composed memo: compact_kept (the set, built at first use)
local compact_kept

-- Whether record `m` may be stored compact (above) when it is due when
-- enqueued: every field outside COMPACT_FIELDS (but not_before) at its
-- default.
local function compact_fits(m)
  if not compact_kept then
    compact_kept = { [M.not_before] = true }
    for k = 1, COMPACT_LEN do compact_kept[COMPACT_FIELDS[k]] = true end
  end
  local blank = blank_record()
  for at = 1, JOB_LEN do
    if not compact_kept[at] and m[at] ~= blank[at] then return false end
  end
  return true
end

-- How many of COMPACT_FIELDS record `m` stores: up to its last one not at
-- its default, and at least COMPACT_MIN.
local function compact_length(m)
  local blank, len = blank_record(), COMPACT_LEN
  while len > COMPACT_MIN and m[COMPACT_FIELDS[len]] == blank[COMPACT_FIELDS[len]] do len = len - 1 end
  return len
end

-- The whole record of the fields of compact record `c` (as unpacked).
local function from_compact(c)
  local m = new_record()
  for k = 1, #c do m[COMPACT_FIELDS[k]] = c[k] end
  m[M.not_before] = m[M.enqueued_at]
  return m
end

-- Leasing a compact record (lib/lease.lua) stores it whole: the header of
-- OLDEST_JOB_LEN fields, the lease, then these. For compact record `raw`:
-- its fields after the lease (M positions 5 to OLDEST_JOB_LEN) as that
-- layout stores them, the offset its payload starts after, its due time and
-- its name; nil when raw is not compact. The same bytes as encode_record of
-- its split_record, for a fraction of the instructions: the stored values'
-- bytes are cut from raw and the defaults between them were packed once
-- (compact_gaps). cmsgpack.pack costs about 1.5k instructions a value (it
-- makes a buffer and a Lua string of each): packing the 15 fields made a
-- compact record's lease about 11k a job dearer than a standard record's
-- splice, this cut about 8k (callgrind, docs/performance.md round eleven).
-- composed memo: compact_gaps (the packed defaults between the stored fields, built at first use)
local compact_gaps
local function compact_after_lease(raw)
  local head, q, q_len = string.byte(raw, 1, 3)
  local len = head - 0x90
  if len < COMPACT_MIN or len > COMPACT_LEN then return nil end
  local gaps = compact_gaps
  if not gaps then
    if M.queue ~= 5 or M.seq ~= 10 or M.enqueued_at ~= 11 or M.max_attempts ~= 14 or M.name ~= 16
      or OLDEST_JOB_LEN ~= 19 or COMPACT_LEN ~= 5 or COMPACT_FIELDS[4] ~= M.name or COMPACT_FIELDS[5] ~= M.max_attempts then
      error('redq: compact_after_lease writes fields 5 to 19 from queue, seq, enqueued_at, name, max_attempts')
    end
    local b = blank_record()
    gaps = { cmsgpack.pack(b[6], b[7], b[8], b[9]), cmsgpack.pack(DUE_AT_ENQUEUE, b[13]), cmsgpack.pack(b[15]),
      cmsgpack.pack(b[17], b[18], b[19]), cmsgpack.pack(b[14]), cmsgpack.pack(b[16]) }
    compact_gaps = gaps
  end
  -- The queue (at most 128 bytes: a fixstr or a str8) ends at queue_end;
  -- seq and enqueued_at follow it, up to offset `at`; then the name (a
  -- fixstr, str8 or str16: at most 256 bytes) and max_attempts, if stored.
  local queue_end = q < 0xc0 and 2 + q - 0xa0 or 3 + q_len
  local at, seq, enqueued_at = cmsgpack.unpack_limit(raw, 2, queue_end)
  if at < 0 then return nil end
  local used, name, name_bytes, max_bytes = at, '', gaps[6], gaps[5]
  if len > 3 then
    used, name = cmsgpack.unpack_limit(raw, len - 3, at)
    local n, n1, n2 = string.byte(raw, at + 1, at + 3)
    local name_end = n < 0xc0 and at + 1 + n - 0xa0 or n == 0xd9 and at + 2 + n1 or at + 3 + 256 * n1 + n2
    name_bytes = string.sub(raw, at + 1, name_end)
    if len > 4 then max_bytes = string.sub(raw, name_end + 1, used) end
  end
  -- Fields 5 | 6-9 | 10, 11 | 12, 13 | 14 | 15 | 16 | 17-19.
  return string.sub(raw, 2, queue_end) .. gaps[1] .. string.sub(raw, queue_end + 1, at) .. gaps[2] ..
    max_bytes .. gaps[3] .. name_bytes .. gaps[4], used, enqueued_at, name
end

-- Split a stored record into the meta (a whole record, as a table) and the
-- payload (a string): '' for a detached record (above), whose payload is in
-- K.detached.
local function split_record(raw)
  local used, m = cmsgpack.unpack_one(raw)
  if #m < OLDEST_JOB_LEN then
    m = from_compact(m)
    if used < 0 then return m, '' end
    return m, string.sub(raw, used + 1)
  end
  if #m < JOB_LEN then
    local blank = blank_record()
    for at = #m + 1, JOB_LEN do m[at] = blank[at] end
  end
  if m[M.not_before] == DUE_AT_ENQUEUE then m[M.not_before] = m[M.enqueued_at] end
  if used < 0 then return m, '' end
  return m, string.sub(raw, used + 1)
end

-- The lease, queue and key fields of a record (M positions 1 to 8), decoded
-- without the rest: what an ack needs. A record of another header (older
-- than OLDEST_JOB_LEN) takes the whole decode.
local function record_head(raw)
  if not stored_length(raw) then return (split_record(raw)) end
  local _, a, b, c, d, e, f, g, h = cmsgpack.unpack_limit(raw, 8, 3)
  return { a, b, c, d, e, f, g, h }
end

-- The compact form's parts of template record `m` (above), or false when
-- it does not fit: the header and queue packed, and the packed fields after
-- enqueued_at (name, max_attempts, as far as its compact length goes).
local function compact_parts(m)
  if COMPACT_FIELDS[1] ~= M.queue or COMPACT_FIELDS[2] ~= M.seq or COMPACT_FIELDS[3] ~= M.enqueued_at then
    error('redq: compact_parts needs queue, seq and enqueued_at first in COMPACT_FIELDS')
  end
  if not compact_fits(m) then return false end
  local len, rest = compact_length(m), {}
  for k = 4, len do rest[k - 3] = m[COMPACT_FIELDS[k]] end
  return { head = string.char(0x90 + len) .. cmsgpack.pack(m[M.queue]),
    tail = len > 3 and cmsgpack.pack(unpack(rest)) or '' }
end

-- Records built from a template: a call that creates many jobs packs the
-- fields they share once (template_parts of a record holding them: the
-- queue, gate and the options of jobs that set the same ones) and per job
-- packs only its sequence number and due time (spliced_record), instead of
-- the whole array. cmsgpack packs an array as its header followed by each
-- element packed on its own, so the bytes are the same as encode_record's
-- of the same fields: a template changes no stored byte. Its jobs differ
-- only in seq, enqueued_at and not_before, none of which is trailing, so
-- they share the template's lean length.

-- The packed parts of record `m` that do not depend on a job's own three
-- numbers (seq, enqueued_at, not_before: neighbours, so they are one pack
-- between the two parts): the head (the header and the fields before seq)
-- and the tail (the fields after not_before, up to the lean length). `m` is
-- kept as the parts' `fields` (the caller gives it up). Its compact parts
-- (compact_parts) are made when a call that writes compact records first
-- asks (record_template): nil until then, false when the record does not
-- fit.
local function template_parts(m)
  local seq, not_before = M.seq, M.not_before
  if M.enqueued_at ~= seq + 1 or not_before ~= seq + 2 or OLDEST_JOB_LEN <= not_before then
    error('redq: template_parts needs seq, enqueued_at and not_before to be neighbours, before the oldest length')
  end
  local len = lean_length(m)
  return { fields = m, head = record_header(len) .. cmsgpack.pack(unpack(m, 1, seq - 1)),
    tail = cmsgpack.pack(unpack(m, not_before + 1, len)) }
end

-- A call's template of `parts` (template_parts) for jobs enqueued at
-- `enqueued_at`; a job due when enqueued is stored compact when `compact`
-- and the record fits. `after` caches what follows seq for such jobs: false
-- until the first has used the template, then true until the second packs
-- it once (enqueued_at, then DUE_AT_ENQUEUE or nothing when compact, then
-- the tail), leaving each later job only its seq to pack (a lone job would
-- pay that pack for nothing).
local function record_template(parts, enqueued_at, compact)
  if compact and parts.compact == nil then parts.compact = compact_parts(parts.fields) end
  return { enqueued_at = enqueued_at, head = parts.head, tail = parts.tail,
    compact = compact and parts.compact, after = false }
end

-- The stored bytes of template `t`'s record with `seq` and `not_before`,
-- followed by `payload`: compact (above) when the template's record fits it
-- and the job is due when enqueued.
local function spliced_record(t, seq, not_before, payload)
  local at = t.enqueued_at
  if not_before ~= at then
    return t.head .. cmsgpack.pack(seq, at, not_before) .. t.tail .. payload
  end
  -- Compact: queue, seq, enqueued_at, then the compact tail's fields.
  -- Whole: not_before stored as DUE_AT_ENQUEUE.
  local compact = t.compact
  local head = compact and compact.head or t.head
  local after = t.after
  if after == true then
    after = compact and cmsgpack.pack(at) .. compact.tail or cmsgpack.pack(at, DUE_AT_ENQUEUE) .. t.tail
    t.after = after
  end
  if after then return head .. cmsgpack.pack(seq) .. after .. payload end
  t.after = true
  if compact then return head .. cmsgpack.pack(seq, at) .. compact.tail .. payload end
  return head .. cmsgpack.pack(seq, at, DUE_AT_ENQUEUE) .. t.tail .. payload
end
