#!/usr/bin/env python3
"""Where a lone enqueue's instructions go, called as a function: the
instructions per call of its library with the body cut short before each
marker (a `do return {} end` inserted there), counted by callgrind on
redis-server.

    scripts/profile-bisect.py --composed DIR --markers FILE [--redq BIN] [--calls N] [--no-options]
                              [--handed] [--ablate] [--no-gc] [--jobs N]

--composed: the scripts as the driver composes them (written by
`REDQ_COMPOSED_OUT=DIR cargo test -p redq --lib write_composed_scripts --
--ignored`; DIR/enqueue.function.lua is cut); --markers: a file of lines,
each the start of a line of the library's body, each occurring once after
the body starts, in the order they run (with --handed: anywhere in the
library, once, the cut an error raised there); --redq: the binary whose `bench` call is
captured for the keys and arguments (target/release/redq); --calls: calls
measured per variant (300); --no-options: send the job without its options
(the bench's job sends its name); --ablate: each line of FILE is
`OLD ==> NEW`, a text of the library (once in it) and what replaces it, and
each variant (one replacement) is measured against the whole library: what
leaving that step out saves, with no cut's own cost in it; --handed: a
worker is parked on the queue before each variant's calls, with room for all
of them, so each enqueue hands its job off (lib/handoff.lua), as in the
latency case; --jobs N: each call enqueues N jobs (1; the same job's fields each, fresh ids,
sent as the driver sends them), as the bulk and window cases do; --no-gc: every call
stops Lua's collector first (profile-calls.py without_collector), so that
steps of a thousand instructions show.

The server keeps its jobs hash a hashtable (`--hash-max-listpack-entries 0`,
as in any namespace of more than 512 jobs). Each line prints a variant's
instructions per call and the difference from the one before: Lua's
incremental garbage collector moves a few thousand instructions between
neighbouring variants, so read a stage's share over several (with --no-gc
they agree within about 1k).
"""
import argparse
import importlib.util
import os
import pathlib
import re
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("calls", HERE / "profile-calls.py")
calls = importlib.util.module_from_spec(spec)
spec.loader.exec_module(calls)

SCRIPT = "enqueue"


def variants(text, markers, anywhere=False):
    """(marker, library text) for each marker, then the whole library.
    With `anywhere` a marker may be in a module's function too (once in the
    whole library) and the cut raises an error there instead of returning:
    the same small cost at every marker, so the steps still add up."""
    start = 0 if anywhere else text.index("return function()\n")
    cut = "do error('cut') end\n" if anywhere else "do return {} end\n"
    out = []
    for marker in markers:
        if text.count(marker, start) != 1:
            sys.exit(f"marker {marker!r} occurs {text.count(marker, start)} times, not once")
        at = text.index(marker, start)
        out.append((marker, text[:at] + cut + text[at:]))
    out.append(("(whole)", text))
    return out


def ablations(text, lines):
    """(the change, library text) for the whole library, then for each line
    `OLD ==> NEW` the library with OLD (once in it) replaced by NEW."""
    out = [("(whole)", text)]
    for line in lines:
        old, new = line.split(" ==> ", 1)
        if text.count(old) != 1:
            sys.exit(f"{old!r} occurs {text.count(old)} times, not once")
        out.append((line, text.replace(old, new, 1)))
    return out


class CutConn(calls.Conn):
    """A connection that takes a cut variant's error reply as a reply."""

    def reply(self):
        line = self.line()
        if line.startswith(b"-") and b"cut" in line:
            return None
        self.buf = line + b"\r\n" + self.buf
        return super().reply()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--composed", required=True)
    p.add_argument("--markers", required=True)
    p.add_argument("--redq", default=str(HERE.parent / "target/release/redq"))
    p.add_argument("--calls", type=int, default=300)
    p.add_argument("--no-options", action="store_true")
    p.add_argument("--handed", action="store_true")
    p.add_argument("--ablate", action="store_true")
    p.add_argument("--no-gc", action="store_true")
    p.add_argument("--jobs", type=int, default=1)
    a = p.parse_args()
    if not 1 <= a.jobs <= 1000:
        sys.exit(f"--jobs must be 1 to 1000 (an enqueue's limit), not {a.jobs}")
    composed = pathlib.Path(a.composed)
    markers = [m for m in pathlib.Path(a.markers).read_text().splitlines() if m.strip()]
    out = pathlib.Path(tempfile.mkdtemp(prefix="redq-bisect."))
    ns, channel, head, job_fields, _, _ = calls.captured_calls(a.redq, str(out))
    keys = calls.queue_keys(HERE.parent, ns, "bench", calls.composed_key_names(composed / f"{SCRIPT}.lua"))
    text = (composed / f"{SCRIPT}.function.lua").read_text()
    if a.no_gc:
        text = calls.without_collector(text)
    job = [job_fields[1], "0"] if a.no_options else job_fields[1:]

    port = calls.free_port()
    server = subprocess.Popen(["valgrind", "--tool=callgrind", "--instr-atstart=no",
                               f"--callgrind-out-file={out}/callgrind.%p", "redis-server", "--port", str(port),
                               "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(out),
                               "--hash-max-listpack-entries", "0"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    conn = CutConn(port)
    pid = int(re.search(r"process_id:(\d+)", conn.call("INFO", "server").decode()).group(1))

    def control(*args):
        subprocess.run(["callgrind_control", *args, str(pid)], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def fcall(name):
        # The head as the binary sends it (queue, channel, payload limit, count, then the gate
        # and the record format), for --jobs jobs.
        # A job after the first sends "=" for the same options, as the driver does, where the
        # library takes it (lib/job_new.lua since round seventeen).
        again = [job[0], "="] if "count == '='" in text and job[1] != "0" else job
        jobs = [field for i in range(a.jobs) for field in (calls.fresh_id(), *(again if i else job))]
        return ["FCALL", name, len(keys), *keys, "bench", channel, "1048576", str(a.jobs), *head[4:], *jobs]

    park_keys = calls.queue_keys(HERE.parent, ns, "bench", calls.composed_key_names(composed / "park.lua"))
    parked_key = next(k for k in calls.queue_keys(HERE.parent, ns, "bench") if k.endswith(":parked"))

    def park():
        # As profile-calls.py parks for its enqueue_1_handed: room for the warm-up and every call.
        conn.call("DEL", parked_key)
        room = str(30 + a.calls)
        conn.call("FCALL", "park", len(park_keys), *park_keys,
                  "bench", channel, "7", "1", "1", "600000", room, "600000", "1")

    # Every variant starts from the same state: no keys (FLUSHALL keeps the
    # functions), the last variant's library deleted and the functions' Lua
    # heap collected (with --no-gc it only grows, and its string table's
    # resizes would land on whichever variant crosses a size).
    conn.call("FUNCTION", "LOAD", "REPLACE", calls.COLLECTOR_LIBRARY)

    def fresh_state(previous_library):
        if previous_library:
            conn.call("FUNCTION", "DELETE", previous_library)
        conn.call("FLUSHALL")
        conn.call("FCALL", "profile_collect", "0")

    previous = None
    try:
        if a.handed:
            conn.call("FUNCTION", "LOAD", "REPLACE", (composed / "park.function.lua").read_text())
        cases = ablations(text, markers) if a.ablate else variants(text, markers, a.handed)
        for i, (marker, library) in enumerate(cases):
            name = f"bisect_{i}"
            library = library.replace(f"#!lua name={SCRIPT}", f"#!lua name={name}", 1)
            library = library.replace(f"function_name = '{SCRIPT}'", f"function_name = '{name}'")
            fresh_state(f"bisect_{i - 1}" if i else None)
            conn.call("FUNCTION", "LOAD", "REPLACE", library)
            if a.handed:
                park()
            conn.send([fcall(name) for _ in range(30)])  # warm: the library builds its modules
            control("-i", "on")
            conn.send([fcall(name) for _ in range(a.calls)])
            control("-i", "off")
            control("-d", name)
            dump = sorted(out.glob(f"callgrind.{pid}.*"), key=os.path.getmtime)[-1]
            per_call = int(re.search(r"^totals: (\d+)", dump.read_text(), re.M).group(1)) // a.calls
            dump.unlink()
            if a.ablate:
                # Each change against the whole library: what leaving that step out saves.
                step = "" if previous is None else f"{per_call - previous:+d}"
                print(f"{per_call:>9} {step:>8}  {marker}", flush=True)
                previous = previous if previous is not None else per_call
                continue
            step = "" if previous is None else f"{per_call - previous:+d}"
            print(f"{per_call:>9} {step:>8}  up to: {marker}", flush=True)
            previous = per_call
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
