-- lib/keys.lua: the queue key list. Every queue-scoped script receives the
-- same KEYS, built by driver/src/keys.rs (Keys::queue), named here once; each
-- script's header says which of them it reads and writes.
--   KEYS[1]  {ns}:jobs            hash   id -> job record (lib/job_record.lua)
--   KEYS[2]  {ns}:q:Q:fifo        list   ids of fresh priority-0 jobs, in seq order
--   KEYS[3]  {ns}:q:Q:waiting     zset   id -> (255 - priority) * 2^44 + seq
--   KEYS[4]  {ns}:q:Q:scheduled   zset   id -> due time (unix ms, Redis clock)
--   KEYS[5]  {ns}:q:Q:leased      zset   id -> lease expiry (unix ms)
--   KEYS[6]  {ns}:q:Q:dead        zset   id -> died at (unix ms)
--   KEYS[7]  {ns}:q:Q:stats       hash   p<bucket>/f<bucket> -> processed/failed count
--   KEYS[8]  {ns}:dedup           hash   dedup key -> job id
--   KEYS[9]  {ns}:dedup:ttl       zset   dedup key -> expiry (TTL-mode keys only)
--   KEYS[10] {ns}:ord:active      hash   ordering key -> id of the job holding it
--   KEYS[11] {ns}:ord:blocked     zset   (lex) "key\nseq16\nid": jobs queued behind a holder
--   KEYS[12] {ns}:ord:ready       zset   (lex) "queue\nseq16\nid": released successors
--   KEYS[13] {ns}:ord:blocked:n   hash   queue -> number of its jobs in ord:blocked
--   KEYS[14] {ns}:events          stream capped feed of dead-letter events
--   KEYS[15] {ns}:seq             string job sequence (FIFO order within a priority)
--   KEYS[16] {ns}:lease:seq       string lease id generator (the fencing token)
--   KEYS[17] {ns}:queues          set    every queue name ever enqueued to
--   KEYS[18] {ns}:paused          set    paused queue names
--   KEYS[19] {ns}:q:Q:parked      string the one worker parked on Q for hand-offs
--                                        (lib/parked.lua), expiring with its park
--   KEYS[20] {ns}:kept            hash   id -> kept record of a finished job
--                                        (completed or cancelled) and its result
--   KEYS[21] {ns}:q:Q:completed   zset   id -> finished at (unix ms): Q's kept completed jobs
--   KEYS[22] {ns}:q:Q:cancelled   zset   id -> cancelled at (unix ms): Q's kept cancelled jobs
--   KEYS[23] {ns}:tombstones      hash   id -> outcome and time, once the kept record is gone
--                                        (lib/kept_record.lua)
--   KEYS[24] {ns}:tombstones:at   zset   id -> when its tombstone expires (trim order)
--   KEYS[25] {ns}:retention       hash   queue -> what Q keeps of finished jobs, and
--                                        "Q:bytes" -> what they are charged (lib/kept.lua)
--   KEYS[26] {ns}:progress        hash   id -> the job's latest progress, JSON text
--                                        (lib/notes.lua), until the job leaves for good
--   KEYS[27] {ns}:logs            hash   id -> the job's last log lines, each ended by
--                                        "\n", oldest first (bounded: lib/notes.lua)
-- Flow control (lib/flow.lua; the layout is described there):
--   KEYS[28] {ns}:limits          hash   "Q" -> Q's limits; "Q\nK" -> limit key K's override
--   KEYS[29] {ns}:q:Q:lim         hash   Q's per-key state: "u\nK" leased, "h\nK" held,
--                                        "p\nK" pushed back until; "p\n" the queue's push-back
--   KEYS[30] {ns}:q:Q:lim_starts  zset   (lex) "K\nms13\nlease": starts while a rate applies
--                                        (K = "" for the queue's own rate)
--   KEYS[31] {ns}:q:Q:lim_held    zset   (lex) "K\nscore16\nid": due jobs held back by their key
--   KEYS[32] {ns}:q:Q:lim_ready   zset   K -> waiting score of its best held job (keys with room)
--   KEYS[33] {ns}:q:Q:lim_wake    zset   K -> when K may have room again (rate window, push-back)
--   KEYS[34] {ns}:q:Q:metrics     hash   wait/run histograms and outcome counts per job name,
--                                        in rollups and totals (lib/metrics.lua)
-- Workflows (lib/gate.lua; the layout is described there and in lua/README.md):
--   KEYS[35] {ns}:wf:gates        hash   G -> gate record (lib/gate_record.lua)
--   KEYS[36] {ns}:wf:members      zset   (lex) "G\nid": the members of gate G
--   KEYS[37] {ns}:wf:outcomes     hash   "G\nid" -> how a member of G finished: "c<result>"
--                                        completed, "d<error>" dead, "x" cancelled, "r" deleted
--   KEYS[38] {ns}:wf:of           zset   (lex) "id\nG": gates a job joined after its creation
--   KEYS[39] {ns}:wf:awaiting     zset   (lex) "queue\nid": jobs waiting on a gate, undecided or held
--   KEYS[40] {ns}:wf:awaiting:n   hash   queue -> how many of its jobs are in wf:awaiting
--   KEYS[41] {ns}:wf:expire       zset   G -> when its data is deleted (ms); also the gates' list order
-- ARGV[1] is always the queue name Q and ARGV[2] the wake-up channel.
-- A script that takes more keys (the schedule scripts) finds its own after
-- these, from KEYS[QUEUE_KEY_COUNT + 1].
-- composed eager: every queue script names its keys through K (driver/src/scripts/compose.rs)

local K = {
  jobs = KEYS[1], fifo = KEYS[2], waiting = KEYS[3], scheduled = KEYS[4],
  leased = KEYS[5], dead = KEYS[6], stats = KEYS[7], dedup = KEYS[8],
  dedup_ttl = KEYS[9], ord_active = KEYS[10], ord_blocked = KEYS[11],
  ord_ready = KEYS[12], ord_blocked_n = KEYS[13], events = KEYS[14],
  seq = KEYS[15], lease_seq = KEYS[16], queues = KEYS[17], paused = KEYS[18],
  parked = KEYS[19], kept = KEYS[20], completed = KEYS[21], cancelled = KEYS[22],
  tombstones = KEYS[23], tombstones_at = KEYS[24], retention = KEYS[25],
  progress = KEYS[26], logs = KEYS[27], limits = KEYS[28], lim = KEYS[29],
  lim_starts = KEYS[30], lim_held = KEYS[31], lim_ready = KEYS[32], lim_wake = KEYS[33],
  metrics = KEYS[34], wf_gates = KEYS[35], wf_members = KEYS[36], wf_outcomes = KEYS[37],
  wf_of = KEYS[38], wf_awaiting = KEYS[39], wf_awaiting_n = KEYS[40], wf_expire = KEYS[41],
}
local QUEUE_KEY_COUNT = 41
local QUEUE = ARGV[1]
local CHANNEL = ARGV[2]
