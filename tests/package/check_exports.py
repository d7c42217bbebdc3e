#!/usr/bin/env python3
"""Checks librecur.so's dynamic symbol table against the public API.

Usage: check_exports.py LIBRARY
Every defined dynamic symbol must belong to namespace recur (functions, and the vtables and
typeinfo of the exported classes) or be a C API recur_* function, so that the libraries
linked into librecur.so (protobuf, onnx_proto, oneDNN) and its internals stay private; and
the entry points an application calls must be there. Prints the count.
"""
import re
import subprocess
import sys

# What include/recur declares and an application calls; a few from each header.
REQUIRED = [
    "recur::Session::Session(",
    "recur::Session::run(",
    "recur::Session::explain() const",
    "recur::Session::from_bytes(",
    "recur::list_providers()",
    "recur::version()",
    "recur::Tensor::empty(",
    "recur::Tensor::to(",
    "recur::dtype_name(",
    "recur::to_string(recur::ErrorCode)",
    "recur::shape_to_string(",
    "recur::ValueInfo::shape_string() const",
    "typeinfo for recur::Error",
]
ALLOWED = re.compile(r"^(recur::|(typeinfo|typeinfo name|vtable|VTT) for recur::|recur_\w+$|"
                     r"[^ (]+ recur::)")  # the last: a function template, return type first


def main():
    lib = sys.argv[1]
    out = subprocess.run(["nm", "-D", "--defined-only", "-C", lib], capture_output=True,
                         text=True, check=True).stdout
    symbols = []
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] not in ("A",):  # A: the version node itself
            # The abi tag of functions returning std::string is no part of what a caller writes.
            symbols.append(parts[2].split("@")[0].replace("[abi:cxx11]", ""))
    bad = [s for s in symbols if not ALLOWED.match(s)]
    missing = [r for r in REQUIRED if not any(s.startswith(r) for s in symbols)]
    print(f"{lib}: {len(symbols)} exported symbols")
    for s in bad:
        print("not public API: " + s)
    for r in missing:
        print("missing: " + r)
    return 1 if bad or missing else 0


if __name__ == "__main__":
    sys.exit(main())
