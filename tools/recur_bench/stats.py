"""Summary statistics and crossover points; pure functions (unit-tested)."""
import math
import statistics


def percentile(values, p):
    """Linear interpolation between closest ranks, as numpy's default and recur-run's."""
    s = sorted(values)
    if not s:
        return None
    pos = p * (len(s) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def summarize(samples):
    """{n, median, p90, min, mean} of run times, or None without samples."""
    if not samples:
        return None
    return {"n": len(samples), "median": statistics.median(samples),
            "p90": percentile(samples, 0.9), "min": min(samples),
            "mean": statistics.fmean(samples)}


def geomean(values):
    v = [x for x in values if x and x > 0]
    if not v:
        return None
    return math.exp(sum(math.log(x) for x in v) / len(v))


def _at(values, i):
    return values[i] if i < len(values) else None


def crossovers(xs, series):
    """Where the fastest engine changes along one swept axis.

    xs: increasing positive values; series: {engine: [latency or None per x]}. Returns a list of
    {"engine", "from_engine", "x_before", "x_after", "x_cross"}: `engine` is the fastest at
    x_after and `from_engine` was the fastest at x_before; x_cross interpolates, on log-log
    axes, where the two lines meet (None when one of them lacks a point there). The first
    entry has from_engine None and x_cross xs[0]: who is fastest from the start.
    """
    out = []
    prev = None
    prev_i = None
    for i, x in enumerate(xs):
        cands = [(v[i], e) for e, v in series.items() if i < len(v) and v[i] is not None]
        if not cands:
            continue
        best = min(cands)[1]
        if prev is None:
            out.append({"engine": best, "from_engine": None, "x_before": None, "x_after": x,
                        "x_cross": x})
        elif best != prev:
            x0 = xs[prev_i]
            a0, a1 = _at(series[prev], prev_i), _at(series[prev], i)
            b0, b1 = _at(series[best], prev_i), _at(series[best], i)
            cross = None
            if None not in (a0, a1, b0, b1) and min(a0, a1, b0, b1) > 0 and x0 > 0 and x > 0:
                # log(prev / best): <= 0 at x0 (prev was faster), >= 0 at x (best is).
                f0 = math.log(a0) - math.log(b0)
                f1 = math.log(a1) - math.log(b1)
                if f0 != f1:
                    frac = min(1.0, max(0.0, f0 / (f0 - f1)))
                    cross = math.exp(math.log(x0) + frac * (math.log(x) - math.log(x0)))
            out.append({"engine": best, "from_engine": prev, "x_before": x0, "x_after": x,
                        "x_cross": cross})
        prev, prev_i = best, i
    return out
