#!/usr/bin/env python3
"""Checks that no #include runs from a lower layer of recur to a higher one.

The layers, bottom up (docs/architecture.md draws them):
  include/recur                                   the public API
  runtime/core < runtime/graph < runtime/provider, runtime/rnn
                                                  what providers may use
  converters/                                     weight layouts, pure functions
  providers/<name>/                               reference, onednn, cuda; none includes another
  runtime/engine/{onnx,optimize,session}          loading, rewriting, planning, running
  runtime/engine/capi                             the C API, over the public C++ API only
  tools/ < tests/ < bench/                        users of everything

A file may include project headers of its own folder and of lower layers only. With --graph
it prints the folder-level import graph instead (edge counts), which the docs' picture shows.
Exit status 1 on a violation.
"""
import os
import re
import sys
from collections import Counter

# (folder prefix, rank). The longest matching prefix wins. Equal ranks may not include each
# other unless they are the same folder.
LAYERS = [
    ("include/recur", 0),
    ("runtime/core", 1),
    ("runtime/graph", 2),
    ("runtime/provider", 3),
    ("runtime/rnn", 3),
    ("converters", 4),
    ("providers/reference", 5),
    ("providers/onednn", 5),
    ("providers/cuda", 5),
    ("runtime/engine/onnx", 6),
    ("runtime/engine/optimize", 7),
    ("runtime/engine/session", 8),
    ("runtime/engine/capi", 9),
    ("tools", 10),
    ("bench", 12),
    ("tests", 11),
]
# The public Session class is implemented in one place; everything else below tools/ uses the
# small public headers (value_info.h, options.h, assignment.h) for the types it needs. The C
# API is a user of the public API like tools/, compiled into the library.
SESSION_HEADER = "include/recur/session.h"
SESSION_IMPL = "runtime/engine/session/session_impl.h"
SESSION_USERS = ("runtime/engine/capi/",)
# Folders that sit on the public API alone, so that what they expose cannot depend on internals.
PUBLIC_API_ONLY = ("runtime/engine/capi/",)
SOURCE = re.compile(r"\.(h|cc|cu|cuh)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    best = None
    for prefix, rank in LAYERS:
        if path == prefix or path.startswith(prefix + "/"):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, rank)
    return best


def resolve(inc):
    # Project includes are written from the repository root, public ones as recur/...
    if inc.startswith("recur/"):
        return "include/" + inc
    return inc


def scan(root):
    for top in ("include", "runtime", "converters", "providers", "tools", "bench", "tests"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if SOURCE.search(f):
                    full = os.path.join(dirpath, f)
                    rel = os.path.relpath(full, root)
                    with open(full, encoding="utf-8", errors="replace") as fh:
                        for inc in INCLUDE.findall(fh.read()):
                            yield rel, resolve(inc)


def main():
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    graph = "--graph" in sys.argv
    bad = []
    edges = Counter()
    for src, inc in scan(root):
        a, b = layer_of(src), layer_of(inc)
        if a is None or b is None or not os.path.exists(os.path.join(root, inc)):
            continue  # not a project header (a system or generated one)
        if a[0] != b[0]:
            edges[(a[0], b[0])] += 1
        if (inc == SESSION_HEADER and src != SESSION_IMPL and a[1] < layer_of("tools")[1]
                and not src.startswith("include/") and not src.startswith(SESSION_USERS)):
            bad.append(f"{src}: includes recur/session.h (only {SESSION_IMPL} may, below tools/)")
        if src.startswith(PUBLIC_API_ONLY) and not inc.startswith("include/recur/"):
            bad.append(f"{src}: includes {inc} (it may use the public API only, include/recur)")
            continue
        if a[0] == b[0] or a[1] > b[1]:
            continue
        bad.append(f"{src}: includes {inc} ({b[0]} is not below {a[0]})")
    if graph:
        for (a, b), n in sorted(edges.items(), key=lambda e: (layer_of(e[0][0])[1], e[0])):
            print(f"{a} -> {b}  ({n})")
        return 0
    for line in bad:
        print(line)
    print(f"layers: {len(bad)} upward includes" if bad else "layers: every include points down")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
