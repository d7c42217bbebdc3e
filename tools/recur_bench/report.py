"""The table (text for the terminal, Markdown for docs), the crossover list and the comparison
with the seed figures, all from a result dictionary (the one --json writes)."""
from . import env as envmod
from . import stats


def fmt_ms(v):
    if v is None:
        return "-"
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    if v >= 1:
        return "%.2f" % v
    return "%.3f" % v


def fmt_mb(v):
    return "-" if v is None else ("%.0f" % v if v >= 10 else "%.1f" % v)


def ratio_text(r):
    return "-" if r is None else "%.2fx" % r


def point_text(point):
    return " ".join("%s=%s" % kv for kv in point.items())


def rows(result, threads):
    """The table's rows for one thread count: (cells, note)."""
    base = result.get("baseline")
    out = []
    for r in result["results"]:
        if r["threads"] != threads:
            continue
        case = r["case"] + (" " + point_text(r["point"]) if r.get("point") else "")
        lat = r.get("latency")
        if r["status"] != "ok" or not lat:
            out.append([case, r["engine"], r.get("nodes") or "-", "-", "-", "-", "-", "-", "-",
                        "-", "-", "-", "-", r.get("reason", r["status"])])
            continue
        note = []
        if lat["n"] < result["settings"]["min_runs"]:
            note.append("%d runs (slow: time budget)" % lat["n"])
        if r.get("load_avg_after") and r["load_avg_after"][0] > 1.5 * result["machine"]["cpu"][
                "logical_cpus"]:
            note.append("busy machine (load %.1f)" % r["load_avg_after"][0])
        out.append([case, r["engine"], r.get("nodes") or "-", fmt_ms(lat["median"]),
                    fmt_ms(lat["p90"]), fmt_ms(lat["min"]), str(lat["n"]),
                    "base" if r["engine"] == base else ratio_text(r.get("speedup")),
                    fmt_ms(r.get("load_ms")), fmt_ms(r.get("load_warm_ms")),
                    fmt_mb(r.get("load_rss_over_empty_mib")), fmt_mb(r.get("peak_rss_mib")),
                    fmt_mb(r.get("rss_over_empty_mib")), "; ".join(note)])
    return out


def headers(result):
    base = result.get("baseline") or "-"
    return ["case", "engine", "nodes", "p50 ms", "p90 ms", "min ms", "runs",
            "vs %s" % base, "load ms", "warm load ms", "load over empty MiB", "peak RSS MiB",
            "over empty MiB", "note"]


def text_table(head, body, max_note=70):
    body = [r[:-1] + [r[-1] if len(r[-1]) <= max_note else r[-1][:max_note - 3] + "..."]
            for r in body]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body)]
    numeric = set(range(3, 13))

    def line(cells):
        out = []
        for k, (c, w) in enumerate(zip(cells, widths)):
            out.append(str(c).rjust(w) if k in numeric else str(c).ljust(w))
        return "  ".join(out).rstrip()

    sep = "  ".join("-" * w for w in widths)
    lines = [line(head), sep]
    prev_case = None
    for r in body:
        if prev_case is not None and r[0] != prev_case:
            lines.append("")
        lines.append(line(r))
        prev_case = r[0]
    return "\n".join(lines)


def md_table(head, body):
    def esc(x):
        return str(x).replace("|", "\\|")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in body:
        lines.append("| " + " | ".join(esc(x) for x in r) + " |")
    return "\n".join(lines)


def engines_text(result):
    lines = []
    for e in result["engines"]:
        lines.append("  %-13s %s" % (e["name"] + ":", ("available" + (
            " (%s)" % e["version"] if e.get("version") else "")) if e["available"] else
            "unavailable (%s)" % e["reason"]))
    return "\n".join(lines)


def seed_comparison(result):
    """recur's load time and memory against the baseline peer, case by case, beside the seed
    figures (67% faster model load, 33% less memory): [(engine, threads, load ratio geomean,
    memory ratio geomean, cases)]."""
    base = result.get("baseline")
    out = []
    if not base:
        return out
    by = {}
    for r in result["results"]:
        if r["status"] == "ok":
            by[(r["case"], tuple(sorted(r.get("point", {}).items())), r["threads"],
                r["engine"])] = r
    engines = [e["name"] for e in result["engines"] if e.get("family") == "recur"]
    for threads in result["settings"]["threads"]:
        for eng in engines:
            loads, mems, peaks, n = [], [], [], 0
            for (case, point, t, e), r in by.items():
                if t != threads or e != eng:
                    continue
                b = by.get((case, point, t, base))
                if not b:
                    continue
                n += 1
                if r.get("load_ms") and b.get("load_ms"):
                    loads.append(r["load_ms"] / b["load_ms"])
                if r.get("rss_over_empty_mib") and b.get("rss_over_empty_mib"):
                    mems.append(r["rss_over_empty_mib"] / b["rss_over_empty_mib"])
                if r.get("peak_rss_mib") and b.get("peak_rss_mib"):
                    peaks.append(r["peak_rss_mib"] / b["peak_rss_mib"])
            if n:
                out.append({"engine": eng, "threads": threads, "cases": n,
                            "load_ratio": stats.geomean(loads), "memory_ratio": stats.geomean(mems),
                            "peak_ratio": stats.geomean(peaks)})
    return out


def speed_text(result):
    """The geometric mean, minimum and maximum of each engine's ratio to the baseline."""
    base = result.get("baseline")
    lines = []
    for t in result["settings"]["threads"]:
        for e in result["engines"]:
            xs = [r["speedup"] for r in result["results"] if r["threads"] == t and
                  r["engine"] == e["name"] and r.get("speedup")]
            if xs:
                lines.append("  %-12s %d thread%s: %.2fx (min %.2fx, max %.2fx) over %d cases" % (
                    e["name"], t, "s" if t > 1 else "", stats.geomean(xs), min(xs), max(xs),
                    len(xs)))
    if not lines:
        return ""
    return "Speed against %s (geometric mean of the ratios):\n" % base + "\n".join(lines)


def seed_text(result):
    comp = result.get("seed_comparison") or []
    if not comp:
        return ""
    base = result["baseline"]
    lines = ["Load time and memory against %s (geometric means over the cases both ran; "
             "the seed figures were 67%% faster load, 33%% less memory):" % base]
    for c in comp:
        def pct(x, what_less, what_more):
            if x is None:
                return "-"
            return "%.2fx (%d%% %s)" % (x, round(abs(1 - x) * 100),
                                        what_less if x < 1 else what_more)
        lines.append("  %-12s %d thread%s: load time %s; memory over an empty model %s; peak "
                     "RSS %s" % (c["engine"], c["threads"], "s" if c["threads"] > 1 else "",
                                 pct(c["load_ratio"], "less", "more"),
                                 pct(c["memory_ratio"], "less", "more"),
                                 pct(c.get("peak_ratio"), "less", "more")))
    return "\n".join(lines)


def load_text(result):
    """Issue 15's targets, case by case: cold and warm load and the memory at load over an
    empty model, each as the largest ratio to the baseline, naming that case."""
    base = result.get("baseline")
    if not base:
        return ""
    by = {(r["case"], tuple(sorted(r.get("point", {}).items())), r["threads"], r["engine"]): r
          for r in result["results"] if r["status"] == "ok"}
    lines = []
    for t in result["settings"]["threads"]:
        for e in result["engines"]:
            if e.get("family") != "recur":
                continue
            worst = {}
            for (case, point, th, name), r in by.items():
                b = by.get((case, point, th, base))
                if th != t or name != e["name"] or not b:
                    continue
                for key, bkey in (("load_ms", "load_ms"), ("load_warm_ms", "load_ms"),
                                  ("load_rss_over_empty_mib", "load_rss_over_empty_mib")):
                    if r.get(key) is None or not b.get(bkey):
                        continue
                    x = r[key] / b[bkey]
                    if key not in worst or x > worst[key][0]:
                        worst[key] = (x, case)
            if worst:
                def part(key, what):
                    return "%s %s" % (what, "%.2fx (%s)" % worst[key] if key in worst else "-")
                lines.append("  %-12s %d thread%s: %s; %s; %s" % (
                    e["name"], t, "s" if t > 1 else "", part("load_ms", "cold load"),
                    part("load_warm_ms", "warm load"),
                    part("load_rss_over_empty_mib", "peak RSS at load over empty")))
    if not lines:
        return ""
    return ("Load against %s, the largest ratio over the cases (below 1: less than %s):\n"
            % (base, base) + "\n".join(lines))


def crossover_text(result):
    lines = []
    for c in result.get("crossovers", []):
        where = c["axis"] + (" at " + point_text(c["fixed"]) if c["fixed"] else "")
        if len(result["settings"]["threads"]) > 1 and c.get("threads"):
            where += ", %d thread%s" % (c["threads"], "s" if c["threads"] > 1 else "")
        parts = []
        for x in c["changes"]:
            if x["from_engine"] is None:
                parts.append("%s fastest from %s=%s" % (x["engine"], c["axis"], x["x_after"]))
            else:
                at = ("~%.3g" % x["x_cross"]) if x["x_cross"] else "between %s and %s" % (
                    x["x_before"], x["x_after"])
                parts.append("%s overtakes %s at %s=%s" % (x["engine"], x["from_engine"],
                                                            c["axis"], at))
        lines.append("  %s, along %s: %s" % (c["case"], where, "; ".join(parts)))
    if not lines:
        return ""
    return "Crossovers (the fastest engine by median latency):\n" + "\n".join(lines)


def header_text(result):
    m = result["machine"]
    gpu = ", ".join(g["name"] for g in m["gpu"]["gpus"]) if m["gpu"].get("present") else \
        "none (%s)" % m["gpu"].get("reason", "")
    return "\n".join([
        "recur-bench  %s" % result["command"],
        "machine: %s (%s), %s" % (envmod.short_machine(m), m["hostname"], m["os"]),
        "GPU: %s" % gpu,
        "commit %s, %s, load average %s -> %s" % (m["commit"], m["date"], m.get("load_avg"),
                                                  result.get("load_avg_after")),
        "method: %d alternating rounds per case; blocks of %d warm-up + %d timed runs, each a "
        "new child process; pooled medians; ratio = baseline median / engine median (> 1: "
        "faster than %s)" % (result["settings"]["rounds"], result["settings"]["warmup"],
                             result["settings"]["repeat"], result.get("baseline") or "-"),
    ])


def full_text(result):
    out = [header_text(result), "", "engines:", engines_text(result)]
    for msg in result.get("messages", []):
        out.append("note: " + msg)
    for t in result["settings"]["threads"]:
        body = rows(result, t)
        if not body:
            continue
        out += ["", "%d thread%s:" % (t, "s" if t > 1 else ""), text_table(headers(result), body)]
    for extra in (speed_text(result), seed_text(result), load_text(result),
                  crossover_text(result)):
        if extra:
            out += ["", extra]
    return "\n".join(out) + "\n"


def markdown(result):
    out = []
    for t in result["settings"]["threads"]:
        body = rows(result, t)
        if body:
            out += ["", "**%d thread%s**" % (t, "s" if t > 1 else ""), "",
                    md_table(headers(result), body)]
    return "\n".join(out) + "\n"
