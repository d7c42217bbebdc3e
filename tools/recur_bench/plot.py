"""Charts with matplotlib (Debian's python3-matplotlib): a bar chart for single runs, line
charts for sweeps. Every chart has axis labels with units, a legend and a title naming the
model, the machine and the date."""
import math

from . import env as envmod

COLORS = {"reference": "#7f7f7f", "onednn": "#1f77b4", "cudnn": "#2ca02c",
          "cuda-generic": "#bcbd22", "onnxruntime": "#ff7f0e", "pytorch": "#d62728"}
EXTRA = ["#9467bd", "#8c564b", "#e377c2", "#17becf"]
STYLES = ["-", "--", ":", "-."]
MARKERS = ["o", "s", "^", "D", "v", "P"]


def _color(engine, order):
    if engine in COLORS:
        return COLORS[engine]
    return EXTRA[order.index(engine) % len(EXTRA)] if engine in order else "#000000"


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _human(v):
    """1500000 -> '1.5M', 20000 -> '20k', 0.05 -> '0.05'."""
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            return "%g%s" % (v / div, suffix)
    return "%g" % v


def _log_ticks(ax, axis="y"):
    """Labelled ticks at 1, 2 and 5 of each decade, as plain numbers."""
    from matplotlib import ticker
    target = ax.yaxis if axis == "y" else ax.xaxis
    lo, hi = ax.get_ylim() if axis == "y" else ax.get_xlim()
    decades = math.log10(hi / lo) if lo > 0 and hi > lo else 1
    subs = (1.0, 2.0, 5.0) if decades <= 3.5 else (1.0,)
    target.set_major_locator(ticker.LogLocator(base=10, subs=subs))
    target.set_major_formatter(ticker.FuncFormatter(lambda v, _: _human(v)))
    target.set_minor_formatter(ticker.NullFormatter())


def _title(result, what):
    m = result["machine"]
    return "recur-bench: %s\n%s, %s, commit %s" % (what, envmod.short_machine(m), m["date"][:10],
                                                  m["commit"])


def _engines(result, ok):
    names = []
    for e in result["engines"]:
        if any(r["engine"] == e["name"] for r in ok):
            names.append(e["name"])
    return names


def _cases(ok):
    cases = []
    for r in ok:
        if r["case"] not in cases:
            cases.append(r["case"])
    return cases


def bar_chart(result, path):
    plt = _pyplot()
    res = [r for r in result["results"] if not r.get("point")]
    ok = [r for r in res if r["status"] == "ok"]
    if not ok:
        return False
    engines = _engines(result, ok)
    cases = _cases(res)
    threads = result["settings"]["threads"]
    panels = ([("latency", t) for t in threads] + [("load", t) for t in threads] +
              [("memory", threads[0])])
    fig, axes = plt.subplots(len(panels), 1, figsize=(max(9, 1.25 * len(cases) + 3),
                                                      3.0 * len(panels) + 1.2), squeeze=False)
    width = 0.8 / max(1, len(engines))
    by = {(r["case"], r["threads"], r["engine"]): r for r in ok}
    base = result.get("baseline")
    for ax, (kind, t) in zip(axes[:, 0], panels):
        for k, eng in enumerate(engines):
            xs, ys, lo, hi = [], [], [], []
            for i, case in enumerate(cases):
                r = by.get((case, t, eng))
                if not r:
                    continue
                x = i - 0.4 + width * (k + 0.5)
                if kind == "latency":
                    lat = r["latency"]
                    xs.append(x)
                    ys.append(lat["median"])
                    lo.append(lat["median"] - lat["min"])
                    hi.append(max(0.0, lat["p90"] - lat["median"]))
                elif kind == "load" and r.get("load_ms"):
                    xs.append(x)
                    ys.append(r["load_ms"])
                elif kind == "memory" and r.get("peak_rss_mib") is not None:
                    xs.append(x)
                    ys.append(r["peak_rss_mib"])
                    over = r.get("rss_over_empty_mib")
                    lo.append(r["peak_rss_mib"] - over if over is not None else 0.0)
            if not xs:
                continue
            kw = dict(width=width, color=_color(eng, engines), label=eng, edgecolor="black",
                      linewidth=0.4)
            if kind == "latency":
                ax.bar(xs, ys, yerr=[lo, hi], capsize=2, error_kw={"elinewidth": 0.7}, **kw)
                if base and eng != base:
                    for x, case, y, up in zip(xs, [c for c in cases if (c, t, eng) in by], ys,
                                              hi):
                        s = by[(case, t, eng)].get("speedup")
                        if s:
                            ax.annotate("%.2gx" % s, (x, y + up), xytext=(0, 2),
                                        textcoords="offset points", ha="center", va="bottom",
                                        fontsize=6.5, rotation=90)
            elif kind == "memory":
                # Dark: what this model adds; light: the same engine with an empty model.
                ax.bar(xs, [y - f for y, f in zip(ys, lo)], bottom=lo, **kw)
                kw.update(label=None, alpha=0.35)
                ax.bar(xs, lo, **kw)
            else:
                ax.bar(xs, ys, **kw)
        if kind != "memory":
            ax.set_yscale("log")
            lim = ax.get_ylim()
            ax.set_ylim(lim[0], lim[1] * 6)  # room for the labels and the legend
            _log_ticks(ax)
        else:
            lim = ax.get_ylim()
            ax.set_ylim(0, lim[1] * 1.25)
        ax.set_xticks(range(len(cases)))
        ax.set_xticklabels(cases, rotation=20 if len(cases) > 6 else 0, ha="right" if len(
            cases) > 6 else "center", fontsize=8)
        ax.set_xlim(-0.6, len(cases) - 0.4)
        ax.grid(axis="y", which="major", alpha=0.3)
        if kind == "latency":
            ax.set_ylabel("latency (ms, log)")
            ax.set_title("Run latency, %d thread%s: bar = median, whisker = min to p90; label = "
                         "speed vs %s" % (t, "s" if t > 1 else "", base or "-"), fontsize=9.5)
        elif kind == "load":
            ax.set_ylabel("session load (ms, log)")
            ax.set_title("Session creation time (median over child processes, %d thread%s)" % (
                t, "s" if t > 1 else ""), fontsize=9.5)
        else:
            ax.set_ylabel("peak RSS (MiB)")
            ax.set_title("Peak resident memory of the child process (median): light = the same "
                         "engine with an empty model, dark = what this model adds", fontsize=9.5)
        ax.legend(fontsize=8, ncol=min(6, len(engines)), loc="upper left")
    what = result.get("title") or (", ".join(cases) if len(cases) <= 3 else
                                   "%d cases (%s ... %s)" % (len(cases), cases[0], cases[-1]))
    fig.suptitle(_title(result, what), fontsize=10.5)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    _save(fig, path)
    return True


def _items(r):
    """Sequences (batch) and time steps (batch x seq) that one run processes."""
    dims = r.get("dims") or {}
    batch = dims.get("batch") or 1
    seq = dims.get("seq")
    return batch, (batch * seq if seq else None)


def line_chart(result, path):
    plt = _pyplot()
    ok = [r for r in result["results"] if r["status"] == "ok" and r.get("point")]
    if not ok:
        return False
    engines = _engines(result, ok)
    cases = _cases(ok)
    axes_keys = []
    for r in ok:
        for k in r["point"]:
            if k not in axes_keys:
                axes_keys.append(k)
    threads = result["settings"]["threads"]
    cols = [(c, k) for c in cases for k in axes_keys]
    fig, axs = plt.subplots(2, len(cols), figsize=(5.6 * len(cols) + 1.0, 9.0), squeeze=False)
    cross = {(c["case"], c["axis"], tuple(sorted(c["fixed"].items())), c.get("threads")): c
             for c in result.get("crossovers", [])}
    for j, (case, key) in enumerate(cols):
        rs = [r for r in ok if r["case"] == case and key in r["point"]]
        others = sorted({tuple((k, v) for k, v in r["point"].items() if k != key) for r in rs})
        if len(others) > 3:  # line styles for the smallest, middle and largest only
            others = [others[0], others[len(others) // 2], others[-1]]
        steps_known = all(_items(r)[1] for r in rs)
        for eng in engines:
            for t_i, t in enumerate(threads):
                for o_i, other in enumerate(others):
                    pts = sorted((r["point"][key], r) for r in rs if r["engine"] == eng and
                                 r["threads"] == t and tuple(
                                     (k, v) for k, v in r["point"].items() if k != key) == other)
                    if not pts:
                        continue
                    xs = [p for p, _ in pts]
                    lat = [r["latency"]["median"] for _, r in pts]
                    thr = [(_items(r)[1] if steps_known else _items(r)[0]) /
                           (r["latency"]["median"] / 1e3) for _, r in pts]
                    label = eng
                    if len(threads) > 1:
                        label += " %dt" % t
                    if len(others) > 1:
                        label += " (" + ", ".join("%s=%s" % kv for kv in other) + ")"
                    style = dict(color=_color(eng, engines),
                                 linestyle=STYLES[(o_i + t_i * len(others)) % len(STYLES)],
                                 marker=MARKERS[(o_i + t_i) % len(MARKERS)], markersize=4,
                                 linewidth=1.4, label=label)
                    axs[0, j].plot(xs, lat, **style)
                    axs[1, j].plot(xs, thr, **style)
        n_marks = 0
        for t in threads:
            for other in others:
                c = cross.get((case, key, tuple(sorted(other)), t))
                if not c:
                    continue
                for ch in c["changes"]:
                    if ch["from_engine"] is None or not ch["x_cross"]:
                        continue
                    for row in (0, 1):
                        axs[row, j].axvline(ch["x_cross"], color=_color(ch["engine"], engines),
                                            linestyle=":", linewidth=1.0, alpha=0.8)
                    xs_all = sorted({r["point"][key] for r in rs})
                    right = math.log(ch["x_cross"]) > (math.log(xs_all[0]) +
                                                       math.log(xs_all[-1])) / 2
                    where = "".join(" (%s=%s)" % kv for kv in other)
                    if len(threads) > 1:
                        where += " (%dt)" % t
                    axs[0, j].annotate(
                        "%s fastest\nfrom %s~%.3g%s" % (ch["engine"], key, ch["x_cross"], where),
                        (ch["x_cross"], 1), xycoords=("data", "axes fraction"),
                        xytext=(-3 if right else 3, -4 - 22 * n_marks),
                        textcoords="offset points", va="top",
                        ha="right" if right else "left", fontsize=7.5,
                        color=_color(ch["engine"], engines))
                    n_marks += 1
        for row in (0, 1):
            ax = axs[row, j]
            ax.set_xscale("log")
            ax.set_yscale("log")
            xs = sorted({r["point"][key] for r in rs})
            ax.set_xticks(xs)
            ax.set_xticklabels([str(x) for x in xs])
            ax.minorticks_off()
            _log_ticks(ax)
            ax.grid(alpha=0.3)
            ax.set_xlabel("%s (%s)" % (key, "sequences per run" if key == "batch" else
                                       "time steps" if key == "seq" else "dimension size"))
        # One legend per column, under the throughput chart: a column per engine.
        axs[1, j].legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16),
                         ncol=max(1, len(engines)), frameon=False)
        fixed = rs[0].get("fixed_dims") or {}
        sub = case + (" (" + ", ".join("%s=%s" % kv for kv in fixed.items()) + ")"
                      if fixed else "")
        axs[0, j].set_title("Latency vs %s: %s" % (key, sub), fontsize=9.5)
        axs[0, j].set_ylabel("median latency (ms, log)")
        axs[1, j].set_title("Throughput vs %s" % key, fontsize=9.5)
        axs[1, j].set_ylabel("time steps/s (batch x seq / latency)" if steps_known else
                             "sequences/s (batch / latency)")
    fig.suptitle(_title(result, "sweep of " + (result.get("title") or ", ".join(cases))),
                 fontsize=10.5)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    _save(fig, path)
    return True


def _save(fig, path):
    """PNG at 80 dpi, then reduced to a 128-colour palette where Pillow is present (charts
    have few colours; the files stay small enough to commit)."""
    plt = _pyplot()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    try:
        from PIL import Image
        with Image.open(path) as im:
            small = im.convert("RGB").quantize(colors=128, method=Image.Quantize.MEDIANCUT)
        small.save(path, optimize=True)
    except (ImportError, AttributeError, OSError):
        pass


def plot(result, path):
    """Line charts when the result holds sweep points, else the bar chart."""
    if any(r.get("point") for r in result["results"]):
        return line_chart(result, path)
    return bar_chart(result, path)
