#!/usr/bin/env python3
"""Lists functions longer than a limit in the given folders (default: runtime/ providers/).

Uses universal-ctags for the start and end line of every function definition. Registration
tables (functions named register_*) are exempt: they are lists, not logic.
Exit status 1 when any function is over the limit.
"""
import argparse
import json
import os
import subprocess
import sys


def functions(paths):
    out = subprocess.run(
        ["ctags", "-R", "--languages=C++,CUDA", "--langmap=C++:+.cu.cuh", "--kinds-C++=f",
         "--fields=+ne", "--output-format=json", "-f", "-", *paths],
        capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        tag = json.loads(line)
        if tag.get("kind") != "function" or "end" not in tag:
            continue
        yield tag["path"], tag["name"], tag.get("scope", ""), tag["line"], tag["end"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="*", default=["runtime", "providers"])
    ap.add_argument("--limit", type=int, default=120)
    args = ap.parse_args()
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    os.chdir(root)
    long = []
    for path, name, scope, start, end in functions(args.paths):
        n = end - start + 1
        if n > args.limit and not name.startswith("register_"):
            long.append((n, path, start, (scope + "::" if scope else "") + name))
    for n, path, start, name in sorted(long, reverse=True):
        print(f"{n:5d}  {path}:{start}  {name}")
    print(f"{len(long)} functions over {args.limit} lines")
    return 1 if long else 0


if __name__ == "__main__":
    sys.exit(main())
