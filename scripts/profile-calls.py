#!/usr/bin/env python3
"""Instructions per call of the hot scripts (enqueue of 1 job, enqueue of 100
jobs, claim of 1 job from a plain queue, ack of 1 job, enqueue of 1 job
handed to a parked worker), and of each included
module's load (the prelude), counted by callgrind on redis-server.

    scripts/profile-calls.py [--root DIR] [--redq BIN] [--calls N] [--batch N,...] [--composed DIR [--functions] [--enqueue enqueue_plain] [--ack ack_plain] [--claim claim_plain]] [--modules] [--backlog N] [--record-format standard|compact|detached:N] [--metrics-off] [--pad-bytes P] [--out DIR]

--root: the checkout whose lua/ is composed (a `git archive` of the commit
under test); --redq: the binary whose `bench --case process --n 4` is watched
with MONITOR for the keys and arguments redq sends (target/release/redq);
--calls: calls measured per case (1000; enqueue of 100 jobs runs a tenth as
many); --batch N,...: also claim and ack of N jobs a call (claim_N, ack_N,
per call and per job: the Worker's batches), each over a queue filled for it
beforehand, unmeasured, with enough jobs for every call (calls / N calls, at
least 20); --composed DIR: the four scripts as the driver composes them (see
--help), else as scripts/profile-compose.py does (modules eagerly);
--functions: with --composed, the scripts called as Redis Functions (FCALL of
the libraries the same test writes beside them, DIR/<script>.function.lua);
--no-gc: with --functions, each call stops Lua's garbage collector first
(without_collector below: for comparing two builds to a thousand
instructions);
--modules: also the prelude, module by module, of enqueue, claim and
ack (each module's figure is the cost of composing it on top of those before
it, with the script's body replaced by `return {}`); --backlog N: first,
unmeasured, N jobs waiting in another queue of the namespace (0); --record-format
compact: the enqueues write compact records (driver/src/record_format.rs), so
the claims lease compact records; detached:N: the enqueues keep payloads of N
bytes or more apart from their records; --metrics-off: the bench queue's metrics
are off (lua/metrics_switch.lua's field) before any call is measured;
--pad-bytes P: every job's payload carries a pad of P bytes, as `redq bench
--pad-bytes` sends it (the binary must take the flag).

The backlog decides how the jobs hash is stored. Below
hash-max-listpack-entries (512) records with values of at most
hash-max-listpack-value (64) bytes, as the bench's are, Redis keeps it as a
listpack, where every lookup of a job (HMGET, HSET, HSETNX, HDEL) scans the
fields before it: about 24k instructions at 300 records. Past that it is a
hash table, and a lookup costs the same at any size. Without a backlog the
single-job cases run on the listpack (the figures of earlier rounds); with
--backlog 600 they run on the hash table, as in any namespace past 512 jobs or
with larger payloads.

The figures count everything redis-server does while instrumentation is on
(reading the command, running the script, replying), so they are the
server's cost per call, not the machine's load: two runs agree within a few
hundred instructions. `empty` is a script that returns {} given the same keys
and arguments as a single enqueue: the floor under any call.
"""
import argparse
import importlib.util
import os
import pathlib
import random
import re
import socket
import string
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("profile_compose", HERE / "profile-compose.py")
pc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pc)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Conn:
    """A minimal RESP2 client: pipelined commands, parsed replies."""

    def __init__(self, port):
        for _ in range(600):
            try:
                self.sock = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                time.sleep(0.1)
        else:
            sys.exit(f"redis-server on {port} did not start")
        self.buf = b""

    def send(self, commands):
        out = []
        for cmd in commands:
            out.append(b"*%d\r\n" % len(cmd))
            for a in cmd:
                a = a if isinstance(a, bytes) else str(a).encode("latin-1")
                out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.sock.sendall(b"".join(out))
        return [self.reply() for _ in commands]

    def call(self, *cmd):
        return self.send([cmd])[0]

    def line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                sys.exit("redis-server closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def exact(self, n):
        while len(self.buf) < n + 2:
            self.buf += self.sock.recv(1 << 20)
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def reply(self):
        line = self.line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            sys.exit("redis error: " + rest.decode("latin-1"))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self.exact(n)
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.reply() for _ in range(n)]
        sys.exit(f"unexpected reply {line!r}")


def unquote(s):
    return re.sub(r'\\(x[0-9a-f]{2}|.)', lambda m: chr(int(m.group(1)[1:], 16)) if m.group(1)[0] == 'x' else
                  {'n': '\n', 'r': '\r', 't': '\t', 'a': '\a', 'b': '\b'}.get(m.group(1), m.group(1)), s)


def enqueue_head(argv):
    """How many head arguments `argv` has when it is an enqueue's in the layout with options sent
    as (code, value) pairs: 7 (with the record format) or 6 (binaries before it), then per job id,
    payload, option count k, 2k entries (or "=" for k, the options of the job before: no more
    entries); else None."""
    if not (argv[3:4] and argv[3].isdigit() and int(argv[3]) > 0):
        return None
    for head in (7, 6):
        at = head
        for i in range(int(argv[3])):
            if at + 3 > len(argv) or not (argv[at + 2].isdigit() or (i > 0 and argv[at + 2] == "=")):
                break
            at += 3 + (2 * int(argv[at + 2]) if argv[at + 2].isdigit() else 0)
        else:
            if at == len(argv):
                return head
    return None


def first_enqueued(argv):
    """The first job's entries of an enqueue's `argv` (see enqueue_head), or None."""
    head = enqueue_head(argv)
    if head is None:
        return None
    return argv[head:head + 3 + 2 * int(argv[head + 2])]


def monitor_bench(redq, port, pad_bytes=0):
    """The MONITOR lines of `redq bench --case process --n 4` against the
    redis-server on `port`: every script redq loads and every call it makes
    (with `pad_bytes`, its jobs' payloads padded as `redq bench --pad-bytes`
    pads them)."""
    conn = Conn(port)
    conn.sock.sendall(b"MONITOR\r\n")
    conn.line()
    # By EVALSHA, as these tools replay the calls (and profile-options.py
    # reads each script's text from its SCRIPT LOAD): the driver's default
    # calls the writing scripts as functions. A binary older than the flag
    # ignores it.
    pad = ["--pad-bytes", str(pad_bytes)] if pad_bytes else []
    subprocess.run([redq, "bench", "--case", "process", "--n", "4", "--script-calls", "eval",
                    "--redis", f"redis://127.0.0.1:{port}"] + pad,
                   check=True, stdout=subprocess.DEVNULL)
    time.sleep(0.3)
    conn.sock.settimeout(0.5)
    lines = []
    try:
        while True:
            lines.append(conn.line().decode("latin-1"))
    except (socket.timeout, TimeoutError):
        pass
    return lines


def captured_calls(redq, tmp, pad_bytes=0):
    """The keys and ARGV redq sends for one enqueue, one claim and one ack
    (its payload padded by `pad_bytes`, see monitor_bench)."""
    port = free_port()
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no", "--dir", tmp], stdout=subprocess.DEVNULL)
    try:
        lines = monitor_bench(redq, port, pad_bytes)
    finally:
        server.terminate()
        server.wait()
    enqueue = claim = ack = None
    head = None
    for line in lines:
        args = [unquote(a) for a in re.findall(r'"((?:\\.|[^"\\])*)"', line)]
        if not args or args[0].upper() != "EVALSHA":
            continue
        nkeys = int(args[2])
        keys, argv = args[3:3 + nkeys], args[3 + nkeys:]
        if len(argv) < 3 or argv[0] != "bench" or not keys[0].endswith(":jobs"):
            continue
        # By shape: enqueue has 6 head arguments, then per job its id, payload, option count and two
        # entries per option (older binaries: 16 fields per job), claim 6 arguments, ack 2, 4 or 5 per job.
        first = first_enqueued(argv)
        if first is not None and enqueue is None:
            enqueue, head = first, argv[:enqueue_head(argv)]
        elif argv[3:4] and argv[3].isdigit() and int(argv[3]) > 0 and len(argv) - 16 * int(argv[3]) in (4, 6) \
                and enqueue is None:
            # The job's 16 fields; a binary older than the gate arguments sent 4 head arguments.
            at = len(argv) - 16 * int(argv[3])
            enqueue, head = argv[at:at + 16], argv[:at]
        elif len(argv) in (6, 7) and claim is None:
            # A claim's optional 7th argument is the moment after which it leases nothing
            # (lua/claim.lua): replayed later it would have passed, so the replay leaves it out.
            claim = argv[:6]
        elif argv[2].isdigit() and int(argv[2]) > 0 and (len(argv) - 3) % int(argv[2]) == 0 \
                and (len(argv) - 3) // int(argv[2]) in (2, 4, 5) and ack is None:
            stride = (len(argv) - 3) // int(argv[2])
            ack = argv[3:3 + stride]
    if enqueue is None or claim is None or ack is None:
        sys.exit("no enqueue, claim and ack call seen in the MONITOR output")
    return keys[0][:-len(":jobs")], claim[1], head, enqueue, claim, ack


def queue_keys(root, ns, queue, names=None):
    """The queue key list of the root's lib/keys.lua, for namespace tag `ns`:
    the keys `names` (a composed script's own, on its `-- KEYS:` line), else all."""
    text = (pathlib.Path(root) / "lua/lib/keys.lua").read_text()
    listed = re.findall(r"^--\s+K\.(\w+)\s+(\S+)", text, re.M)
    if listed:
        patterns = dict(listed)
        keys = [patterns[n] for n in names] if names is not None else [p for _, p in listed]
    else:
        keys = re.findall(r"^--\s+KEYS\[\d+\]\s+(\S+)", text, re.M)
    return [k.replace("{ns}", ns).replace(":Q:", f":{queue}:") for k in keys]


def composed_key_names(path):
    """The queue key names a script composed by the driver takes (its
    `local QUEUE_KEY_COUNT = n -- KEYS: ...` line), or None (all of them)."""
    m = re.search(r"^local QUEUE_KEY_COUNT = \d+ -- KEYS:(.*)$", path.read_text(), re.M)
    return m.group(1).split() if m else None


def lease_id(record):
    """The first field of a packed record: its lease id (a msgpack uint). A claim returns a
    detached record (lua/lib/job_record.lua) as [meta, payload], the meta under an array32
    header."""
    if isinstance(record, list):
        record = record[0]
    at = 5 if record[0] == 0xdd else 3
    b = record[at]
    if b < 0x80:
        return b
    width = {0xcc: 1, 0xcd: 2, 0xce: 4, 0xcf: 8}[b]
    return int.from_bytes(record[at + 1:at + 1 + width], "big")


def fresh_id():
    return "01K" + "".join(random.choice(string.digits + "ABCDEFGHJKMNPQRSTVWXYZ") for _ in range(23))


# A function that runs a full collection of the functions' Lua heap (--no-gc).
COLLECTOR_LIBRARY = ("#!lua name=profile_collect\n"
                     "redis.register_function('profile_collect', function() collectgarbage('collect') return 0 end)")


def without_collector(library):
    """A composed function library whose every call stops Lua's collector
    first (--no-gc): its steps, which land on whichever call allocates past
    the threshold, move a lone call's count by several thousand
    instructions from run to run; without them two runs agree within a few
    hundred, so a change of a thousand shows. What the collector costs is
    real (about 4k a lone enqueue, 7k a handed one): read --no-gc figures
    against each other, never against figures with the collector. The heap
    then only grows, and its string table's resizes would land on whichever
    case crosses a size: each case starts after a full collection
    (COLLECTOR_LIBRARY)."""
    return library.replace("return function()\n", "return function()\ncollectgarbage('stop')\n", 1)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--root", default=str(HERE.parent))
    p.add_argument("--redq", default=str(HERE.parent / "target/release/redq"))
    p.add_argument("--calls", type=int, default=1000)
    p.add_argument("--batch", default="", help="comma-separated job counts: claim and ack of that many jobs a call")
    p.add_argument("--modules", action="store_true")
    p.add_argument("--composed", help="a directory of scripts as the driver composes them (written by "
                   "`REDQ_COMPOSED_OUT=DIR cargo test -p redq --lib write_composed_scripts -- --ignored`)")
    p.add_argument("--functions", action="store_true",
                   help="with --composed: call the scripts as Redis Functions (FCALL of DIR/<script>.function.lua)")
    p.add_argument("--backlog", type=int, default=0,
                   help="jobs left waiting in another queue first (600: the jobs hash as a hash table)")
    p.add_argument("--no-gc", action="store_true",
                   help="with --functions: each call stops Lua's collector first (see the docstring)")
    p.add_argument("--metrics-off", action="store_true",
                   help="the bench queue's metrics are off (metrics_switch.lua's field) before any call is measured")
    p.add_argument("--enqueue", default="enqueue",
                   help="with --composed: the enqueue script called (enqueue_plain, enqueue_detached: its variants, "
                        "lua/enqueue.lua's header)")
    p.add_argument("--ack", default="ack",
                   help="with --composed: the ack script called (ack_plain: its variant, lua/ack.lua's header)")
    p.add_argument("--claim", default="claim",
                   help="with --composed: the claim script called (claim_plain: its variant, lua/claim.lua's header)")
    p.add_argument("--out")
    p.add_argument("--pad-bytes", type=int, default=0,
                   help="every job's payload carries a pad of this many bytes (redq bench --pad-bytes)")
    p.add_argument("--record-format", default="standard",
                   help="the record format the enqueues ask for: standard, compact or detached:N "
                        "(enqueue.lua's ARGV[7])")
    a = p.parse_args()
    try:
        batches = [int(b) for b in a.batch.split(",") if b.strip()]
    except ValueError:
        sys.exit(f"--batch takes job counts separated by commas (such as 16,50), not {a.batch!r}")
    if any(not 1 <= b <= 1000 for b in batches):
        sys.exit(f"--batch job counts must be 1 to 1000 (a claim's limit), not {a.batch!r}")
    pc.LUA = pathlib.Path(a.root) / "lua"
    out = pathlib.Path(a.out or tempfile.mkdtemp(prefix="redq-calls."))
    out.mkdir(parents=True, exist_ok=True)
    ns, channel, enqueue_head_args, job_fields, claim_fields, ack_fields = captured_calls(a.redq, str(out), a.pad_bytes)
    if a.record_format != "standard" and not (a.record_format == "compact"
                                               or re.fullmatch(r"detached:[1-9][0-9]*", a.record_format)):
        sys.exit(f"--record-format is standard, compact or detached:N, not {a.record_format!r}")
    if a.record_format != "standard":
        if len(enqueue_head_args) != 7:
            sys.exit("--record-format needs a binary whose enqueue sends the record format (7 head arguments)")
        enqueue_head_args[6] = a.record_format
    keys = queue_keys(a.root, ns, "bench")

    port = free_port()
    server = subprocess.Popen(["valgrind", "--tool=callgrind", "--instr-atstart=no",
                               f"--callgrind-out-file={out}/callgrind.%p", "redis-server", "--port", str(port),
                               "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(out)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    conn = Conn(port)
    pid = conn.call("INFO", "server").decode()
    pid = int(re.search(r"process_id:(\d+)", pid).group(1))

    def control(*args):
        subprocess.run(["callgrind_control", *args, str(pid)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    if a.no_gc:
        conn.call("FUNCTION", "LOAD", "REPLACE", COLLECTOR_LIBRARY)

    def measured(name, commands, per_call=1):
        if a.no_gc:
            # A full collection first, so each case starts from the same heap (see without_collector).
            conn.call("FCALL", "profile_collect", "0")
        control("-i", "on")
        replies = conn.send(commands)
        control("-i", "off")
        control("-d", name)
        dumps = sorted(out.glob(f"callgrind.{pid}.*"), key=os.path.getmtime)
        total = int(re.search(r"^totals: (\d+)", dumps[-1].read_text(), re.M).group(1))
        dumps[-1].rename(out / f"{name}.callgrind")
        line = f"{name:<28} {total // len(commands):>10} instructions per call"
        if per_call > 1:
            line += f", {total // len(commands) // per_call:>8} per job"
        print(line, flush=True)
        return replies

    if a.functions and not a.composed:
        sys.exit("--functions needs --composed DIR (the libraries are written beside the scripts)")
    functions = set()

    def load(script, **kw):
        if a.functions and not kw:
            library = (pathlib.Path(a.composed) / f"{script}.function.lua").read_text()
            if a.no_gc:
                library = without_collector(library)
            conn.call("FUNCTION", "LOAD", "REPLACE", library)
            functions.add(script)
            return script
        if a.composed and not kw:
            return conn.call("SCRIPT", "LOAD", (pathlib.Path(a.composed) / f"{script}.lua").read_text()).decode()
        return conn.call("SCRIPT", "LOAD", pc.compose(script, **kw)).decode()

    def evalsha(sha, keys, argv):
        if sha in functions:  # a function library of that name (--functions)
            return ["FCALL", sha, len(keys), *keys, *argv]
        return ["EVALSHA", sha, len(keys), *keys, *argv]

    n = a.calls
    enqueue, claim, ack = load(a.enqueue), load(a.claim), load(a.ack)

    # A job after the first sends "=" for options the same as the job
    # before's, as the driver does, where the scripts under test take it
    # (lib/job_new.lua since round seventeen; whole options before).
    parser = (pathlib.Path(a.composed) / "enqueue.lua").read_text() if a.composed \
        else (pathlib.Path(a.root) / "lua/lib/job_new.lua").read_text()
    equals = "count == '='" in parser and job_fields[2] != "0"

    def enqueue_argv(jobs):
        argv = ["bench", channel, "1048576", str(jobs)] + enqueue_head_args[4:]
        for i in range(jobs):
            argv += [fresh_id()] + (job_fields[1:2] + ["="] if equals and i > 0 else job_fields[1:])
        return argv

    ekeys = ckeys = akeys = keys
    if a.composed:
        ekeys, ckeys, akeys = (queue_keys(a.root, ns, "bench", composed_key_names(pathlib.Path(a.composed) / f"{s}.lua"))
                               for s in (a.enqueue, a.claim, a.ack))
    if a.metrics_off:
        # The field lib/metrics.lua reads (METRIC_OFF), as `redq metrics off bench` writes it.
        conn.call("HSET", next(k for k in keys if k.endswith(":metrics")), "off", "1")
    empty = conn.call("SCRIPT", "LOAD", "return {}").decode()
    conn.send([evalsha(enqueue, ekeys, enqueue_argv(1)) for _ in range(50)])  # warm
    if a.backlog > 0:
        bkeys = queue_keys(a.root, ns, "backlog", composed_key_names(pathlib.Path(a.composed) / f"{a.enqueue}.lua")
                           if a.composed else None)
        for start in range(0, a.backlog, 100):
            argv = enqueue_argv(min(100, a.backlog - start))
            conn.send([evalsha(enqueue, bkeys, ["backlog"] + argv[1:])])
    measured("empty", [evalsha(empty, ekeys, enqueue_argv(1)) for _ in range(n)])
    measured("enqueue_1", [evalsha(enqueue, ekeys, enqueue_argv(1)) for _ in range(n)])
    claim_argv = claim_fields[:2] + ["1"] + claim_fields[3:]
    leased = measured("claim_1", [evalsha(claim, ckeys, claim_argv) for _ in range(n)])
    acks = []
    for reply in leased:
        if len(reply) < 3:
            sys.exit("a claim found no job")
        job_id, record = reply[1], reply[2]
        acks.append(evalsha(ack, akeys, ["bench", channel, "1", job_id, str(lease_id(record))] + ack_fields[2:]))
    codes = measured("ack_1", acks)
    if any(c != [1] for c in codes):
        sys.exit("an ack did not acknowledge its job")

    # A lone enqueue handed to a parked worker (lib/handoff.lua), as in the latency case: one park
    # with room for every call, then the calls; each job leaves leased. The park is dropped after,
    # so the cases below claim what they fill.
    park = load("park")
    pkeys = keys
    if a.composed:
        pkeys = queue_keys(a.root, ns, "bench", composed_key_names(pathlib.Path(a.composed) / "park.lua"))
    leased_key = next(k for k in queue_keys(a.root, ns, "bench") if k.endswith(":leased"))
    parked_key = next(k for k in queue_keys(a.root, ns, "bench") if k.endswith(":parked"))
    before = int(conn.call("ZCARD", leased_key))
    # The last argument: the worker hears shard channels, as a Worker of this version parks
    # (lua/park.lua; a park.lua before it ignores it and hands off by PUBLISH).
    conn.send([evalsha(park, pkeys, ["bench", channel, "7", "1", "1", "600000", str(n), "600000", "1", "1"])])
    measured("enqueue_1_handed", [evalsha(enqueue, ekeys, enqueue_argv(1)) for _ in range(n)])
    if int(conn.call("ZCARD", leased_key)) - before != n:
        sys.exit("an enqueue to a parked worker did not hand its job off")
    conn.call("DEL", parked_key)

    def ack_argv(reply):
        """One ack of every job a claim's reply leased, in its order."""
        argv = ["bench", channel, str((len(reply) - 1) // 2)]
        for i in range(1, len(reply), 2):
            argv += [reply[i], str(lease_id(reply[i + 1]))] + ack_fields[2:]
        return argv

    for batch in batches:
        calls = max(n // batch, 20)
        # Filled first, unmeasured: the claims below must each find `batch` jobs (a claim of
        # fewer would be measured as a batch it is not).
        need = calls * batch
        while need > 0:
            conn.send([evalsha(enqueue, ekeys, enqueue_argv(min(need, 100)))])
            need -= 100
        argv = claim_fields[:2] + [str(batch)] + claim_fields[3:]
        leased = measured(f"claim_{batch}", [evalsha(claim, ckeys, argv) for _ in range(calls)], batch)
        if any(len(reply) != 1 + 2 * batch for reply in leased):
            sys.exit(f"a claim of {batch} jobs leased fewer")
        codes = measured(f"ack_{batch}", [evalsha(ack, akeys, ack_argv(reply)) for reply in leased], batch)
        if any(c != [1] * batch for c in codes):
            sys.exit(f"an ack of {batch} jobs did not acknowledge every job")
    measured("enqueue_100", [evalsha(enqueue, ekeys, enqueue_argv(100)) for _ in range(max(n // 10, 1))], 100)

    if a.modules:
        # profile-compose.py's scripts take the whole key list.
        all_keys = keys
        for script, (keys, argv) in (("enqueue", (all_keys, enqueue_argv(1))), ("claim", (all_keys, claim_argv)),
                                     ("ack", (all_keys, ["bench", channel, "1", fresh_id(), "1"] + ack_fields[2:]))):
            source = (pc.LUA / f"{script}.lua").read_text()
            first_line = next(l for l in source.splitlines()[1:] if l.strip() and not l.startswith("--"))
            modules = pc.needed_modules(source)
            for k in range(len(modules) + 1):
                sha = load(script, cut_before=first_line.strip(), only=modules[:k])
                label = f"{script}_prelude_{modules[k - 1] if k else 'none'}"
                measured(label, [evalsha(sha, keys, argv) for _ in range(n // 2)])
    try:
        conn.sock.sendall(b"SHUTDOWN NOSAVE\r\n")
    except OSError:
        pass
    server.wait()
    print(f"callgrind files: {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
