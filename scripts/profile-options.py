#!/usr/bin/env python3
"""What each enqueue option adds per job, against the common job (payload
{"i": index}, priority 0, no keys, no name): Redis memory per waiting job, and
instructions per enqueue call and per claim + ack, counted by callgrind on
redis-server.

    scripts/profile-options.py [--redq BIN] [--server BIN] [--n N] [--calls N]
                               [--only a,b,...] [--no-callgrind] [--out DIR]

--redq: the binary whose scripts and arguments are measured
(target/release/redq). Its `bench --case process --n 4` is watched with
MONITOR once: the scripts it loads (SCRIPT LOAD: the driver's own
composition), the keys and arguments of its enqueue, claim and ack calls.
Every measured call is that call with the job's fields changed (a fresh id
per job), so nothing here composes or encodes a script itself. Both of
enqueue.lua's job layouts are known, told apart by the captured call: 16
fields per job (binaries up to b8dc27c), or id, payload, a count k and k
(code, value) pairs, only the options off their defaults, codes ascending
(later ones; driver/src/enqueue_args.rs names the codes). In the second an
option is changed by adding or removing its pair, in code order.
--server: the redis-server binary (`redis-server` on PATH; a Valkey binary
from scripts/valkey-bin works too). --n: jobs per memory figure (50 000; at
least 20 000, so per-key constant parts vanish). --calls: single-job enqueue
calls per variant (1 000); enqueue of 100 runs a tenth as many calls; claim +
ack runs calls / 2 jobs, each claimed alone and acknowledged before the next
claim (what a shared ordering key forces; the same for every variant); the
common job is measured once more after the others, to show how far two runs
of the same calls drift.
--only: a comma-separated subset of the variants (names below).

Memory: FLUSHALL, used_memory, N jobs in enqueue calls of 1000 (as
`redq bench --case enqueue_bulk` does), used_memory again, and MEMORY USAGE
(SAMPLES 0) of every key (after a discarded first run, which also grows the
server's own tables); `retention` also claims and acknowledges all N on a
queue keeping every completed job, so its figure is bytes per kept job.

Prints one table line per variant and the per-key breakdown; the callgrind
files stay in --out (a temporary directory by default).
"""
import argparse
import hashlib
import importlib.util
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("profile_calls", HERE / "profile-calls.py")
calls = importlib.util.module_from_spec(spec)
spec.loader.exec_module(calls)
Conn, unquote, fresh_id, lease_id, free_port = calls.Conn, calls.unquote, calls.fresh_id, calls.lease_id, calls.free_port

# enqueue.lua's ARGV: 7 head entries (6 before the record format), then per
# job either these 16 fields (the older layout, after 6) or id, payload, a count k and k (code, value) pairs of
# the options off their defaults, where an option's code is its place in
# FIELDS after id and payload (priority 1 .. trace 14: enqueue.lua's header).
HEAD = 6
FIELDS = ["id", "payload", "priority", "delay_ms", "not_before_ms", "dedup_key", "dedup_ttl_ms", "ordering_key",
          "max_attempts", "retry_window_ms", "name", "attempts", "backoff_base_ms", "backoff_cap_ms", "limit_key",
          "trace"]
OPTION_CODE = {f: str(code) for code, f in enumerate(FIELDS[2:], start=1)}
TEXT_FIELDS = {"id", "payload", "dedup_key", "ordering_key", "name", "limit_key", "trace"}
# An option's default (text "", a number 0): not sent in the pairs layout.
DEFAULTS = ("", "0")
DELAY_MS = 1000
AGAIN = "common_again"
# Each variant: what it is, and the fields of job i that differ from the common job.
VARIANTS = {
    "common": ("payload {\"i\": i}, priority 0, no keys, no name", lambda i: {}),
    "priority": ("priority 5", lambda i: {"priority": "5"}),
    "ordering_distinct": ("an ordering key per job", lambda i: {"ordering_key": f"o{i}"}),
    "ordering_shared": ("one ordering key for all jobs", lambda i: {"ordering_key": "o"}),
    "dedup_live": ("a dedup key per job, held while the job lives", lambda i: {"dedup_key": f"d{i}"}),
    "dedup_ttl": ("a dedup key per job, held 1 h", lambda i: {"dedup_key": f"d{i}", "dedup_ttl_ms": "3600000"}),
    "limit_key": ("one of 100 limit keys, no limit set", lambda i: {"limit_key": f"k{i % 100}"}),
    "delay": (f"a delay of {DELAY_MS} ms (scheduled)", lambda i: {"delay_ms": str(DELAY_MS)}),
    "name": ("the name bench.noop (what `redq bench` sends)", lambda i: {"name": "bench.noop"}),
    "retention": ("the common job on a queue keeping every completed job; memory per kept job", lambda i: {}),
}
# A statement of each script's own text that names it (its first; the
# composition may prefix a lazy module's local with the module's table).
MARKERS = {"enqueue": rb"local FIELDS = [\w.]*JOB_FIELDS\b|local HEAD = [67]\b", "claim": rb"local RECLAIM_PER_CALL = ",
           "ack": rb"local MAX_RESULT_BYTES = "}


def start_server(server, port, out, valgrind=False):
    cmd = [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(out)]
    if valgrind:
        cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}/callgrind.%p"] + cmd
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_server(conn, proc):
    try:
        conn.sock.sendall(b"SHUTDOWN NOSAVE\r\n")
    except OSError:
        pass
    proc.wait()


class Captured:
    """The scripts redq loaded and one call of each of enqueue, claim and ack."""

    def __init__(self, redq, server, out):
        port = free_port()
        proc = start_server(server, port, out)
        try:
            lines = calls.monitor_bench(redq, port)
        finally:
            proc.terminate()
            proc.wait()
        texts, evals = {}, {}
        for line in lines:
            args = [unquote(a) for a in re.findall(r'"((?:\\.|[^"\\])*)"', line)]
            if args[:2] and args[0].upper() == "SCRIPT" and args[1].upper() == "LOAD":
                body = args[2].encode("latin-1")
                texts[hashlib.sha1(body).hexdigest()] = body
            elif args and args[0].upper() == "EVALSHA":
                nkeys = int(args[2])
                evals.setdefault(args[1], (args[3:3 + nkeys], args[3 + nkeys:]))
        self.text, self.keys, self.argv = {}, {}, {}
        for script, marker in MARKERS.items():
            sha = next((s for s, t in texts.items() if re.search(marker, t) and s in evals), None)
            if sha is None:
                sys.exit(f"no {script} call seen in the MONITOR output (no loaded script matches {marker.decode()!r})")
            self.text[script] = texts[sha]
            self.keys[script], self.argv[script] = evals[sha]
        self.queue, self.channel = self.argv["enqueue"][:2]
        job = self.first_job(self.argv["enqueue"])
        if not re.fullmatch(r'\{"i":\d+\}', job["payload"]) or job["name"] != "bench.noop" or job["priority"] != "0":
            sys.exit(f"the captured job's fields are not where enqueue.lua's header puts them: {job}")
        self.job = dict(job, name="")
        ns = re.fullmatch(r"\{(.*)\}:jobs", self.keys["enqueue"][0])
        if not ns:
            sys.exit(f"unexpected first key {self.keys['enqueue'][0]}")
        self.namespace = ns.group(1)

    def first_job(self, argv):
        """The first job of the captured enqueue as all 16 fields, and the layout it came in
        (self.options_sent: True for (code, value) pairs)."""
        jobs = int(argv[3])
        if len(argv) == HEAD + len(FIELDS) * jobs:
            self.options_sent, self.head = False, HEAD
            return dict(zip(FIELDS, argv[HEAD:HEAD + len(FIELDS)]))
        entries = calls.first_enqueued(argv)
        if entries is None:
            sys.exit(f"the enqueue call's jobs are neither {len(FIELDS)} fields each nor id, payload, option count "
                     "and (code, value) pairs: a layout this script does not know")
        self.options_sent, self.head = True, calls.enqueue_head(argv)
        job = {f: "" if f in TEXT_FIELDS else "0" for f in FIELDS}
        job.update(id=entries[0], payload=entries[1])
        field_of = {code: f for f, code in OPTION_CODE.items()}
        for code, value in zip(entries[3::2], entries[4::2]):
            if code not in field_of:
                sys.exit(f"the captured job sends option code {code!r}, which enqueue.lua's header does not list")
            job[field_of[code]] = value
        return job

    def job_entries(self, job):
        """A job's ARGV entries in the captured call's layout."""
        if not self.options_sent:
            return [job[f] for f in FIELDS]
        options = [(OPTION_CODE[f], job[f]) for f in FIELDS[2:] if job[f] not in DEFAULTS]
        return [job["id"], job["payload"], str(len(options))] + [e for pair in options for e in pair]

    def enqueue(self, sha, first, count, variant):
        head = self.argv["enqueue"][:self.head]
        argv = head[:3] + [str(count)] + head[4:]
        change = VARIANTS[variant][1]
        for i in range(first, first + count):
            job = dict(self.job, id=fresh_id(), payload=f'{{"i":{i}}}', **change(i))
            argv += self.job_entries(job)
        return ["EVALSHA", sha, len(self.keys["enqueue"]), *self.keys["enqueue"], *argv]

    def claim(self, sha, count):
        argv = self.argv["claim"][:2] + [str(count)] + self.argv["claim"][3:]
        return ["EVALSHA", sha, len(self.keys["claim"]), *self.keys["claim"], *argv]

    def ack(self, sha, leased):
        """An ack of every (id, record) in `leased`, with the worker's run_ms and result."""
        stride = (len(self.argv["ack"]) - 3) // int(self.argv["ack"][2])
        rest = self.argv["ack"][5:3 + stride]
        argv = self.argv["ack"][:2] + [str(len(leased))]
        for job_id, record in leased:
            argv += [job_id, str(lease_id(record)), *rest]
        return ["EVALSHA", sha, len(self.keys["ack"]), *self.keys["ack"], *argv]


def load_scripts(conn, cap):
    return {s: conn.call("SCRIPT", "LOAD", cap.text[s]).decode() for s in MARKERS}


def set_retention(redq, port, cap, n):
    subprocess.run([redq, "--url", f"redis://127.0.0.1:{port}", "--namespace", cap.namespace, "retention", "set",
                    cap.queue, "--max-count", str(n)], check=True, stdout=subprocess.DEVNULL)


def info_field(conn, section, field):
    return int(re.search(rf"^{field}:(\d+)", conn.call("INFO", section).decode(), re.M).group(1))


def await_due(conn, cap):
    """Until the Redis clock passes the last scheduled job's due time."""
    scheduled = next(k for k in cap.keys["enqueue"] if k.endswith(":scheduled"))
    last = conn.call("ZRANGE", scheduled, -1, -1, "WITHSCORES")
    if not last:
        return
    deadline = time.monotonic() + 60
    while True:
        sec, usec = conn.call("TIME")
        if int(sec) * 1000 + int(usec) // 1000 > float(last[1]):
            return
        if time.monotonic() > deadline:
            sys.exit("the scheduled jobs did not come due within a minute")
        time.sleep(0.05)


def process_all(conn, cap, sha, jobs, per_call):
    """Claim and acknowledge `jobs` jobs, `per_call` at a time."""
    done = 0
    while done < jobs:
        reply = conn.call(*cap.claim(sha["claim"], per_call))
        leased = list(zip(reply[1::2], reply[2::2]))
        if not leased:
            sys.exit(f"a claim found no job after {done} of {jobs}")
        codes = conn.call(*cap.ack(sha["ack"], leased))
        if any(c != 1 for c in codes):
            sys.exit("an ack did not acknowledge its job")
        done += len(leased)


def memory(args, cap, variants):
    port = free_port()
    out = pathlib.Path(tempfile.mkdtemp(prefix="redq-options-mem."))
    proc = start_server(args.server, port, out)
    conn = Conn(port)
    sha = load_scripts(conn, cap)
    rows = {}
    try:
        # The first run after a start grows used_memory by more than its jobs
        # (the keyspace's own tables): a discarded common run takes it.
        for run, variant in enumerate(["common"] + variants):
            conn.call("FLUSHALL")
            if variant == "retention":
                # The queue exists once it has a job, and setting its policy
                # loads every script of the binary (memory outside the
                # keyspace): both before the figure starts.
                conn.call(*cap.enqueue(sha["enqueue"], args.n, 1, "common"))
                set_retention(args.redq, port, cap, args.n + 1)
                process_all(conn, cap, sha, 1, 1)
            before = info_field(conn, "memory", "used_memory")
            for first in range(0, args.n, 1000):
                conn.call(*cap.enqueue(sha["enqueue"], first, min(1000, args.n - first), variant))
            if variant == "retention":
                process_all(conn, cap, sha, args.n, 100)
            grown = info_field(conn, "memory", "used_memory") - before
            usage = {}
            cursor = b"0"
            while True:
                cursor, keys = conn.call("SCAN", cursor, "COUNT", 1000)
                for k in keys:
                    usage[k.decode().split("}:", 1)[-1]] = conn.call("MEMORY", "USAGE", k, "SAMPLES", 0)
                if cursor == b"0":
                    break
            if run > 0:
                rows[variant] = (grown / args.n, sum(usage.values()) / args.n, usage)
    finally:
        stop_server(conn, proc)
    return rows


def instructions(args, cap, variants):
    out = pathlib.Path(args.out or tempfile.mkdtemp(prefix="redq-options-calls."))
    out.mkdir(parents=True, exist_ok=True)
    port = free_port()
    proc = start_server(args.server, port, out, valgrind=True)
    conn = Conn(port)
    pid = int(re.search(r"process_id:(\d+)", conn.call("INFO", "server").decode()).group(1))
    sha = load_scripts(conn, cap)

    def control(*flags):
        subprocess.run(["callgrind_control", *flags, str(pid)], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)

    def counted(name, work):
        control("-i", "on")
        work()
        control("-i", "off")
        control("-d", name)
        dumps = sorted(out.glob(f"callgrind.{pid}.*"), key=os.path.getmtime)
        total = int(re.search(r"^totals: (\d+)", dumps[-1].read_text(), re.M).group(1))
        dumps[-1].rename(out / f"{name}.callgrind")
        return total

    rows = {}
    n = args.calls
    pairs = max(n // 2, 1)
    try:
        # The common job once more at the end: how far two runs of the same
        # calls drift (the Lua heap and the server's tables grow meanwhile).
        for label, variant in [(v, v) for v in variants] + [(AGAIN, "common")]:
            conn.call("FLUSHALL")
            conn.send([cap.enqueue(sha["enqueue"], i, 1, variant) for i in range(20)])  # warm
            conn.call("FLUSHALL")
            one = counted(f"{label}.enqueue_1", lambda: conn.send(
                [cap.enqueue(sha["enqueue"], i, 1, variant) for i in range(n)])) / n
            hundreds = max(n // 10, 1)
            hundred = counted(f"{label}.enqueue_100", lambda: conn.send(
                [cap.enqueue(sha["enqueue"], n + 100 * c, 100, variant) for c in range(hundreds)])) / hundreds / 100
            conn.call("FLUSHALL")
            for first in range(0, pairs, 100):
                conn.call(*cap.enqueue(sha["enqueue"], first, min(100, pairs - first), variant))
            if variant == "retention":
                set_retention(args.redq, port, cap, 10 * pairs)
            await_due(conn, cap)
            process = counted(f"{label}.claim_ack", lambda: process_all(conn, cap, sha, pairs, 1)) / pairs
            rows[label] = (one, hundred, process)
            print(f"  {label:<18} enqueue_1 {one:>9,.0f}  enqueue_100 per job {hundred:>8,.0f}  "
                  f"claim+ack per job {process:>10,.0f}", file=sys.stderr, flush=True)
    finally:
        stop_server(conn, proc)
    print(f"callgrind files: {out}", file=sys.stderr)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--redq", default=str(HERE.parent / "target/release/redq"))
    p.add_argument("--server", default="redis-server")
    p.add_argument("--n", type=int, default=50000)
    p.add_argument("--calls", type=int, default=1000)
    p.add_argument("--only")
    p.add_argument("--no-callgrind", action="store_true")
    p.add_argument("--out")
    a = p.parse_args()
    variants = a.only.split(",") if a.only else list(VARIANTS)
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        sys.exit(f"unknown variant {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
    if a.n < 20000:
        sys.exit("--n must be at least 20000: below that a key's fixed parts show in the per-job figure")
    if "common" not in variants:
        variants.insert(0, "common")
    cap = Captured(a.redq, a.server, tempfile.mkdtemp(prefix="redq-options-capture."))
    version = subprocess.run([a.server, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"{version}; redq {a.redq}; N={a.n} jobs per memory figure, {a.calls} single enqueues per variant")
    mem = memory(a, cap, variants)
    ins = {} if a.no_callgrind else instructions(a, cap, variants)
    base_mem, base_ins = mem["common"], ins.get("common")
    print()
    print("| variant | used_memory B/job | MEMORY USAGE B/job | vs common | enqueue 1, instr/call | vs common "
          "| enqueue 100, instr/job | vs common | claim+ack, instr/job | vs common |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for v in variants:
        grown, usage, _ = mem[v]
        cells = [f"{grown:.1f}", f"{usage:.1f}", f"{usage - base_mem[1]:+.1f}"]
        if v in ins:
            for k in range(3):
                cells += [f"{ins[v][k]:,.0f}", f"{ins[v][k] - base_ins[k]:+,.0f}"]
        print(f"| {v} | " + " | ".join(cells) + " |")
    if AGAIN in ins:
        cells = []
        for k in range(3):
            cells += [f"{ins[AGAIN][k]:,.0f}", f"{ins[AGAIN][k] - base_ins[k]:+,.0f}"]
        print("| common, measured again last | | | | " + " | ".join(cells) + " |")
    print()
    print("MEMORY USAGE per job, by key (keys of at least 0.5 B per job):")
    for v in variants:
        parts = sorted(mem[v][2].items(), key=lambda kv: -kv[1])
        shown = ", ".join(f"{k} {u / a.n:.1f}" for k, u in parts if u / a.n >= 0.5)
        print(f"  {v:<18} {shown}")
    print()
    for v in variants:
        print(f"  {v:<18} {VARIANTS[v][0]}")


if __name__ == "__main__":
    main()
