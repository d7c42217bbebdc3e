#!/usr/bin/env python3
"""The operator schema table the loader checks nodes against (runtime/engine/onnx/schema_table.inc).

recur validates nodes against every operator version of ai.onnx 1..26 and ai.onnx.ml 1..5
(attribute names, types and required flags; input and output counts; deprecation). ONNX's
operator changelogs (docs/Changelog.md, docs/Changelog-ml.md) describe them all. The build has
no network, so the facts this tool reads from them are committed in a compact text form,
tools/schema/onnx_operators.txt, and the C++ table is generated from that file:

  gen_schema_table.py extract Changelog.md Changelog-ml.md > tools/schema/onnx_operators.txt
      parses the changelogs of an ONNX checkout (1.17 or later) into the compact form.
  gen_schema_table.py emit tools/schema/onnx_operators.txt tools/schema/contrib_operators.txt \
          > runtime/engine/onnx/schema_table.inc
      writes the C++ table (constexpr arrays sorted by domain, operator and version) from one
      or more operator files; contrib_operators.txt holds the com.microsoft operators recur
      runs, written by hand from ONNX Runtime's docs/ContribOperators.md.
  gen_schema_table.py check OPERATORS.txt [MORE.txt...] TABLE.inc [Changelog.md Changelog-ml.md]
      exits 1 unless emitting the operator files gives TABLE.inc byte for byte and, when the
      changelogs are given, extracting them gives OPERATORS.txt (CTest schema/table-reproducible;
      the changelog half runs where RECUR_ONNX_DOCS_DIR names an ONNX checkout's docs/).
  gen_schema_table.py verify OPERATORS.txt|Changelog.md Changelog-ml.md
      checks the facts against the installed onnx package's registry (python3-onnx 1.12: opset
      17, ml 3): every version up to those must agree, and every registry schema of the two
      domains must be present (CTest schema/registry-agrees).

Format of OPERATORS.txt, one operator version a line:
  DOMAIN OP VERSION FLAGS MIN_IN MAX_IN MIN_OUT MAX_OUT [ATTR:TYPE[:req]]...
DOMAIN is "-" for ai.onnx; FLAGS is "d" for a deprecated version, else "-"; a count of
"inf" is unbounded; TYPE is the C++ AttrKind without its "k".
"""
import io
import re
import sys

# The versions recur accepts (runtime/engine/onnx/model_loader.h, kMaxOnnxOpset and kMaxMlOpset).
LAST = {"": 26, "ai.onnx.ml": 5}
INF = 2**31 - 1

HEADER = re.compile(r'^### <a name="(?:ai\.onnx\.ml\.)?([A-Za-z0-9_]+)-(\d+)"></a>\*\*[^*]+\*\*(.*)$')
COUNT = re.compile(r"^#### (Inputs|Outputs)(?: \((\d+) - (\d+|&#8734;)\))?\s*$")
ATTR = re.compile(r"^<dt><tt>([A-Za-z0-9_]+)</tt> : ([^<(]+?)\s*(\(required\)|\(default[^<]*\))?</dt>$")
TYPES = {
    "float": "Float",
    "int": "Int",
    "string": "String",
    "tensor": "Tensor",
    "graph": "Graph",
    "list of floats": "Floats",
    "list of ints": "Ints",
    "list of strings": "Strings",
    "list of tensors": "Tensors",
    "list of graphs": "Graphs",
    "type_proto": "Type",
    "sparse_tensor": "Sparse",
}


def parse_changelog(path):
    """{op: {version: spec}}, spec = {deprecated, in: [lo, hi], out: [lo, hi], attrs}."""
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
                hi = INF if c.group(3) == "&#8734;" else int(c.group(3))
                cur["in" if c.group(1) == "Inputs" else "out"] = [int(c.group(2)), hi]
            elif c:
                cur["fixed"][c.group(1)] = True
            continue
        if not line.startswith("<dt><tt>"):
            continue
        if section == "Attributes":
            a = ATTR.match(line)
            if not a:
                raise SystemExit(f"{path}: cannot read attribute line: {line}")
            cur["attrs"].append((a.group(1), TYPES[a.group(2).strip()], a.group(3) == "(required)"))
        elif section in ("Inputs", "Outputs") and cur["fixed"].get(section):
            key = "in" if section == "Inputs" else "out"
            cur[key][0] += 1
            cur[key][1] += 1
    for versions in ops.values():
        for spec in versions.values():
            del spec["fixed"]
            spec["attrs"].sort()
    return ops


def from_changelogs(onnx_md, ml_md):
    """{(domain, op, version): spec} for the versions recur accepts."""
    table = {}
    for domain, path in (("", onnx_md), ("ai.onnx.ml", ml_md)):
        for op, versions in parse_changelog(path).items():
            for v, spec in versions.items():
                if v <= LAST[domain]:
                    table[(domain, op, v)] = spec
    return table


def count_text(n):
    return "inf" if n == INF else str(n)


def write_operators(table, out):
    out.write(f"# ONNX operator versions recur accepts (ai.onnx 1..{LAST['']}, ai.onnx.ml 1..{LAST['ai.onnx.ml']}), extracted\n"
              "# from ONNX's docs/Changelog.md and docs/Changelog-ml.md by\n"
              "# tools/gen_schema_table.py extract; do not edit by hand. Format: see that tool.\n")
    for (domain, op, v) in sorted(table):
        s = table[(domain, op, v)]
        fields = [domain or "-", op, str(v), "d" if s["deprecated"] else "-",
                  str(s["in"][0]), count_text(s["in"][1]),
                  str(s["out"][0]), count_text(s["out"][1])]
        fields += [f"{n}:{k}" + (":req" if r else "") for n, k, r in s["attrs"]]
        out.write(" ".join(fields) + "\n")


def read_operators(path):
    table = {}
    for line in open(path, encoding="utf-8"):
        if not line.strip() or line.startswith("#"):
            continue
        f = line.split()
        count = lambda t: INF if t == "inf" else int(t)
        attrs = []
        for a in f[8:]:
            parts = a.split(":")
            if parts[1] not in TYPES.values() or parts[2:] not in ([], ["req"]):
                raise SystemExit(f"{path}: bad attribute '{a}' in: {line.strip()}")
            attrs.append((parts[0], parts[1], parts[2:] == ["req"]))
        domain = "" if f[0] == "-" else f[0]
        table[(domain, f[1], int(f[2]))] = {
            "deprecated": f[3] == "d", "in": [count(f[4]), count(f[5])],
            "out": [count(f[6]), count(f[7])], "attrs": sorted(attrs)}
    return table


def load(args):
    """The facts from OPERATORS.txt (one argument) or from the two changelogs (two)."""
    if len(args) == 1:
        return read_operators(args[0])
    if len(args) == 2:
        return from_changelogs(*args)
    raise SystemExit(__doc__)


def wrap(items, indent, out, width=100):
    """Writes `items` (C++ initialisers) separated by ", " in lines of at most `width`."""
    line = indent
    for item in items:
        piece = item + ","
        if line != indent and len(line) + 1 + len(piece) > width:
            out.write(line + "\n")
            line = indent
        line += ("" if line == indent else " ") + piece
    if line != indent:
        out.write(line + "\n")


def emit(table, out):
    out.write("// Generated by tools/gen_schema_table.py emit from tools/schema/onnx_operators.txt\n"
              "// (itself extracted from ONNX's operator changelogs) and contrib_operators.txt;\n"
              "// do not edit by hand.\n\n"
              "// Every operator version's attributes {name, type, required}, sorted by name; an\n"
              "// entry of kSchemas refers to its run [first_attr, first_attr + attr_count).\n"
              "// Versions with the same attributes share one run.\n"
              "constexpr AttrSpec kSchemaAttrs[] = {\n")
    runs = {}
    attrs_out = []
    for key in sorted(table):
        attrs = tuple(table[key]["attrs"])
        if attrs and attrs not in runs:
            runs[attrs] = len(attrs_out)
            attrs_out += [f'{{"{n}", AttrKind::k{k}, {str(r).lower()}}}' for n, k, r in attrs]
    wrap(attrs_out, "    ", out)
    out.write("};\n\n"
              "// {domain, op, since_version, deprecated, min_inputs, max_inputs, min_outputs,\n"
              "//  max_outputs, first_attr, attr_count}, sorted by domain, op and version.\n"
              "constexpr SchemaEntry kSchemas[] = {\n")
    for (domain, op, v) in sorted(table):
        s = table[(domain, op, v)]
        attrs = tuple(s["attrs"])
        out.write(f'    {{"{domain}", "{op}", {v}, {str(s["deprecated"]).lower()}, '
                  f'{s["in"][0]}, {s["in"][1]}, {s["out"][0]}, {s["out"][1]}, '
                  f"{runs.get(attrs, 0)}, {len(attrs)}}},\n")
    out.write("};\n")


def read_all(paths):
    table = {}
    for p in paths:
        table.update(read_operators(p))
    return table


def check(args):
    inc_at = next((i for i, a in enumerate(args) if a.endswith(".inc")), None)
    if inc_at is None or inc_at == 0 or len(args) - inc_at - 1 not in (0, 2):
        raise SystemExit(__doc__)
    op_paths, inc_path = args[:inc_at], args[inc_at]
    ops_path = op_paths[0]
    args = [ops_path, inc_path] + args[inc_at + 1:]
    bad = 0
    got = io.StringIO()
    emit(read_all(op_paths), got)
    if got.getvalue() != open(inc_path, encoding="utf-8").read():
        print(f"{inc_path} differs from what 'emit {ops_path}' writes; regenerate it", file=sys.stderr)
        bad = 1
    if len(args) == 4:
        got = io.StringIO()
        write_operators(from_changelogs(*args[2:]), got)
        if got.getvalue() != open(ops_path, encoding="utf-8").read():
            print(f"{ops_path} differs from what 'extract' writes from {args[2]} and {args[3]}",
                  file=sys.stderr)
            bad = 1
        else:
            print(f"{ops_path} matches the changelogs")
    if not bad:
        print(f"{inc_path} matches {' '.join(op_paths)}")
    return bad


def verify(table):
    import onnx.defs

    at = onnx.defs.OpSchema.AttrType
    kinds = {at.FLOAT: "Float", at.INT: "Int", at.STRING: "String", at.TENSOR: "Tensor",
             at.GRAPH: "Graph", at.FLOATS: "Floats", at.INTS: "Ints", at.STRINGS: "Strings",
             at.TENSORS: "Tensors", at.GRAPHS: "Graphs", at.SPARSE_TENSOR: "Sparse",
             at.TYPE_PROTO: "Type"}
    last = {"": 17, "ai.onnx.ml": 3}
    checked = bad = 0
    for (domain, op, v), spec in sorted(table.items()):
        if v > last[domain]:
            continue
        s = onnx.defs.get_schema(op, v, domain)
        checked += 1
        if s.since_version != v:
            bad += 1
            print(f"{domain}:{op}-{v} is {op}-{s.since_version} in the registry", file=sys.stderr)
            continue
        if spec["deprecated"] or s.deprecated:
            if spec["deprecated"] != s.deprecated:
                bad += 1
                print(f"{domain}:{op}-{v}: deprecation differs", file=sys.stderr)
            continue
        attrs = sorted((n, kinds[a.type], a.required) for n, a in s.attributes.items())
        counts = ([s.min_input, min(s.max_input, INF)], [s.min_output, min(s.max_output, INF)])
        if attrs != spec["attrs"] or counts != (spec["in"], spec["out"]):
            bad += 1
            print(f"{domain}:{op}-{v} differs from the registry", file=sys.stderr)
    # The other direction: a registry schema missing from the table would go unchecked.
    missing = 0
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain in last and s.since_version <= last[s.domain]:
            if (s.domain, s.name, s.since_version) not in table:
                missing += 1
                print(f"{s.domain}:{s.name}-{s.since_version} is missing from the table",
                      file=sys.stderr)
    print(f"{checked} operator versions checked against onnx {onnx.__version__}'s registry, "
          f"{bad} differ, {missing} registry versions missing")
    return 1 if bad or missing else 0


def main():
    cmd, args = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else ("", [])
    if cmd == "extract" and len(args) == 2:
        write_operators(from_changelogs(*args), sys.stdout)
    elif cmd == "emit" and args:
        emit(read_all(args), sys.stdout)
    elif cmd == "check":
        sys.exit(check(args))
    elif cmd == "verify":
        sys.exit(verify(load(args)))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
