#!/usr/bin/env python3
"""Writes runtime/engine/onnx/schema_deltas.inc from ONNX's operator changelogs.

The schema registry of libonnx (ONNX 1.12) stops at ai.onnx opset 17 and ai.onnx.ml 3; recur
accepts ai.onnx up to 22 and ai.onnx.ml up to 5. For every operator version in between, this
compares its attributes (name, type, required) and input/output counts with the operator's
previous version in the changelog and emits those that differ (new operators included), so
that the table holds only the versions that change what the schema check looks at: a
version that only widens the type constraints is left out.

Usage: gen_schema_deltas.py ONNX/docs/Changelog.md ONNX/docs/Changelog-ml.md > OUT.inc
(the changelogs of any ONNX checkout at or after 1.17).
       gen_schema_deltas.py --verify Changelog.md Changelog-ml.md
checks the parser instead: for every version up to the installed onnx package's registry
(1.12: opset 17, ml 3) the parsed attributes and counts must equal the registry's.
"""
import re
import sys

RANGES = {"": (18, 22), "ai.onnx.ml": (4, 5)}

HEADER = re.compile(r'^### <a name="(?:ai\.onnx\.ml\.)?([A-Za-z0-9_]+)-(\d+)"></a>\*\*[^*]+\*\*(.*)$')
COUNT = re.compile(r"^#### (Inputs|Outputs)(?: \((\d+) - (\d+|&#8734;)\))?\s*$")
ATTR = re.compile(r"^<dt><tt>([A-Za-z0-9_]+)</tt> : ([^<(]+?)\s*(\(required\)|\(default[^<]*\))?</dt>$")
TYPES = {
    "float": "kFloat",
    "int": "kInt",
    "string": "kString",
    "tensor": "kTensor",
    "graph": "kGraph",
    "list of floats": "kFloats",
    "list of ints": "kInts",
    "list of strings": "kStrings",
    "list of tensors": "kTensors",
    "list of graphs": "kGraphs",
    "type_proto": "kType",
    "sparse_tensor": "kSparse",
}


def parse(path):
    """{op: {version: spec}}, spec = (deprecated, min_in, max_in, min_out, max_out, attrs)."""
    ops = {}
    cur = None
    section = None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        m = HEADER.match(line)
        if m:
            cur = {"deprecated": "deprecated" in m.group(3), "attrs": [], "in": [0, 0],
                   "out": [0, 0], "fixed": {}}
            ops.setdefault(m.group(1), {})[int(m.group(2))] = cur
            section = None
            continue
        if cur is None:
            continue
        if line.startswith("## ") or line.startswith("# "):
            cur = None
            continue
        if line.startswith("#### "):
            section = line[5:].split(" ")[0]
            c = COUNT.match(line)
            if c and c.group(2):
                hi = 2**31 - 1 if c.group(3) == "&#8734;" else int(c.group(3))
                cur["in" if c.group(1) == "Inputs" else "out"] = [int(c.group(2)), hi]
            elif c:
                cur["fixed"][c.group(1)] = True
            continue
        if not line.startswith("<dt><tt>"):
            continue
        if section == "Attributes":
            a = ATTR.match(line)
            if not a:
                raise SystemExit(f"cannot read attribute line: {line}")
            kind = TYPES[a.group(2).strip()]
            cur["attrs"].append((a.group(1), kind, a.group(3) == "(required)"))
        elif section in ("Inputs", "Outputs") and cur["fixed"].get(section):
            key = "in" if section == "Inputs" else "out"
            cur[key][0] += 1
            cur[key][1] += 1
    return ops


def key(spec):
    return (spec["deprecated"], tuple(spec["in"]), tuple(spec["out"]), tuple(sorted(spec["attrs"])))


def emit(domain, ops, out):
    lo, hi = RANGES[domain]
    for op in sorted(ops):
        versions = sorted(ops[op])
        for i, v in enumerate(versions):
            if not lo <= v <= hi:
                continue
            spec = ops[op][v]
            prev = ops[op][versions[i - 1]] if i > 0 else None
            if prev is not None and key(prev) == key(spec):
                continue
            attrs = ", ".join(f'{{"{n}", AttrKind::{k}, {str(r).lower()}}}'
                              for n, k, r in sorted(spec["attrs"]))
            out.write(f'    {{"{domain}", "{op}", {v}, {str(spec["deprecated"]).lower()}, '
                      f'{spec["in"][0]}, {spec["in"][1]}, {spec["out"][0]}, {spec["out"][1]}, '
                      f"{{{attrs}}}}},\n")


def verify(paths):
    import onnx.defs

    at = onnx.defs.OpSchema.AttrType
    kinds = {at.FLOAT: "kFloat", at.INT: "kInt", at.STRING: "kString", at.TENSOR: "kTensor",
             at.GRAPH: "kGraph", at.FLOATS: "kFloats", at.INTS: "kInts",
             at.STRINGS: "kStrings", at.TENSORS: "kTensors", at.GRAPHS: "kGraphs",
             at.SPARSE_TENSOR: "kSparse", at.TYPE_PROTO: "kType"}
    checked = bad = 0
    for domain, path, last in (("", paths[0], 17), ("ai.onnx.ml", paths[1], 3)):
        for op, versions in parse(path).items():
            for v, spec in versions.items():
                if v > last:
                    continue
                s = onnx.defs.get_schema(op, v, domain)
                checked += 1
                if spec["deprecated"] or s.deprecated:
                    bad += spec["deprecated"] != s.deprecated
                    continue
                attrs = sorted((n, kinds[a.type], a.required) for n, a in s.attributes.items())
                counts = ([s.min_input, min(s.max_input, 2**31 - 1)],
                          [s.min_output, min(s.max_output, 2**31 - 1)])
                if attrs != sorted(spec["attrs"]) or counts != (spec["in"], spec["out"]):
                    bad += 1
                    print(f"{domain}:{op}-{v} differs from the registry", file=sys.stderr)
    print(f"{checked} operator versions checked, {bad} differ")
    return 1 if bad else 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--verify":
        sys.exit(verify(sys.argv[2:]))
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    out = sys.stdout
    out.write("// Generated by tools/gen_schema_deltas.py from ONNX's docs/Changelog.md and\n"
              "// docs/Changelog-ml.md; do not edit by hand.\n"
              "// {domain, op, since_version, deprecated, min_inputs, max_inputs, min_outputs,\n"
              "//  max_outputs, {attribute name, type, required}...}\n")
    emit("", parse(sys.argv[1]), out)
    emit("ai.onnx.ml", parse(sys.argv[2]), out)


if __name__ == "__main__":
    main()
