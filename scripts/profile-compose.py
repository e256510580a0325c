#!/usr/bin/env python3
"""Print a script as the driver loads it into Redis (driver/src/scripts/compose.rs),
optionally cut short, for profiling it outside the driver.

    scripts/profile-compose.py enqueue [--root DIR] [--cut-before 'TEXT' --return 'LUA']

The composed text is the script's shebang line, then every module it names on
its `-- include:` lines (each once, after the modules it includes), then the
rest of the script. --root reads lua/ from another checkout (a `git archive`
of the commit under test, while lua/ here is being edited). With --cut-before, the script's body stops at the first
line that starts with TEXT (after stripping spaces), and `return LUA` (default
`{}`) ends it: the cost of a prefix of the script, for scripts/profile-enqueue.sh.
--modules a,b includes those modules (and what they include) instead of the
script's own list: what a leaner script's prelude would cost.
"""
import argparse
import pathlib
import sys

LUA = pathlib.Path(__file__).resolve().parent.parent / "lua"


def includes(source):
    return [name for line in source.splitlines() if line.startswith("-- include:")
            for name in line[len("-- include:"):].split()]


def needed_modules(source, only=None):
    done, open_ = [], []

    def visit(name):
        if name in done:
            return
        if name in open_:
            sys.exit(f"include cycle: {' -> '.join(open_)} -> {name}")
        open_.append(name)
        for dep in includes((LUA / "lib" / f"{name}.lua").read_text()):
            visit(dep)
        open_.pop()
        done.append(name)

    for name in (only if only is not None else includes(source)):
        visit(name)
    return done


def defined(module_text):
    """The top-level locals of a module (driver/src/scripts/compose.rs `defined`)."""
    names = []
    for line in module_text.splitlines():
        if not line.startswith("local "):
            continue
        rest = line[len("local "):]
        part = rest[len("function "):].split("(")[0] if rest.startswith("function ") else rest.split("=")[0]
        for n in (n.strip() for n in part.split(",")):
            if n and n not in names:
                names.append(n)
    return names


def queue_key_table(keys_text):
    """keys.lua's keys as a table K of all of them, KEYS in its order (the
    driver instead binds each K.<name> to the script's own KEYS[i]:
    driver/src/scripts/queue_keys.rs); nothing for a keys.lua that defines K."""
    import re
    names = re.findall(r"^--\s+K\.(\w+)\s", keys_text, re.M)
    if not names:
        return ""
    fields = ", ".join(f"{n} = KEYS[{i + 1}]" for i, n in enumerate(names))
    return f"local K = {{ {fields} }}\nlocal QUEUE_KEY_COUNT = {len(names)}\n"


def module_text(m):
    """A module as composed: inside a function of its own returning its
    locals, unless it says `-- composed inline:` (compose.rs `wrapped`)."""
    text = (LUA / "lib" / f"{m}.lua").read_text().rstrip("\n")
    if m == "keys":
        text = queue_key_table(text) + text
    if any(line.startswith("-- composed inline:") for line in text.splitlines()):
        return text
    names = ", ".join(defined(text))
    return f"local {names} = (function()\n{text}\nreturn {names} end)()"


def compose(name, cut_before=None, ret="{}", only=None):
    source = (LUA / f"{name}.lua").read_text()
    shebang, body = source.split("\n", 1)
    if cut_before is not None:
        kept = []
        for line in body.splitlines():
            if line.strip().startswith(cut_before):
                break
            kept.append(line)
        else:
            sys.exit(f"no line of lua/{name}.lua starts with {cut_before!r}")
        body = "\n".join(kept) + f"\nreturn {ret}\n"
    parts = [shebang] + [module_text(m) for m in needed_modules(source, only)]
    parts.append(body.rstrip("\n"))
    return "\n".join(parts) + "\n"


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("script")
    p.add_argument("--cut-before")
    p.add_argument("--return", dest="ret", default="{}")
    p.add_argument("--root")
    p.add_argument("--modules", help="comma-separated: include these modules (and theirs) instead of the script's own")
    a = p.parse_args()
    if a.root:
        LUA = pathlib.Path(a.root) / "lua"
    only = a.modules.split(",") if a.modules else None
    sys.stdout.write(compose(a.script, a.cut_before, a.ret, only))
