#!/usr/bin/env python3
"""Compiles each public header alone as C++17, as an application would include it.

Usage: check_public_headers.py CXX INCLUDE_DIR [INCLUDE_DIR...]
Every recur/*.h found under the include dirs (the generated version.h too) goes into a file of
its own, `#include <recur/NAME>` twice (the second must be a no-op), compiled with
-std=c++17 -Wall -Wextra -Werror -pedantic -fsyntax-only. Exit status 1 if any fails.
"""
import os
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    cxx, dirs = sys.argv[1], sys.argv[2:]
    headers = sorted({f for d in dirs if os.path.isdir(os.path.join(d, "recur"))
                      for f in os.listdir(os.path.join(d, "recur")) if f.endswith(".h")})
    if not headers:
        print("no headers under " + ", ".join(dirs), file=sys.stderr)
        return 1
    flags = ["-std=c++17", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only"]
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for h in headers:
            src = os.path.join(tmp, h.replace(".", "_") + ".cc")
            with open(src, "w") as f:
                f.write(f"#include <recur/{h}>\n#include <recur/{h}>\n")
            cmd = [cxx, *flags, *(f"-I{d}" for d in dirs), src]
            r = subprocess.run(cmd, capture_output=True, text=True)
            print(f"{'ok  ' if r.returncode == 0 else 'FAIL'} recur/{h}")
            if r.returncode != 0:
                failed.append(h)
                print(r.stderr)
    if failed:
        print(f"{len(failed)} of {len(headers)} public headers do not compile alone as C++17")
        return 1
    print(f"all {len(headers)} public headers compile alone as C++17")
    return 0


if __name__ == "__main__":
    sys.exit(main())
