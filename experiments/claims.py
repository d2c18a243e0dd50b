"""The rules that turn a results table into a verdict on one of the paper's claims.

A claim is data in its experiment's config (`feeds.claims`): the claim's text, a `rule`
named here, its parameters (thresholds, methods, cells) and, optionally, the CSV it reads
(`csv`, default the experiment's summary table `<name>_table`). A rule takes that table
and the parameters and returns an `Outcome`: a `Verdict` and what we observed, in words.
The report renders outcomes; nothing here writes Markdown.

A verdict has more states than holds / does not hold: `INCONCLUSIVE` (for rules that
compare intervals rather than means) and `NOT_RUN` are rendered like the others, and a
rule that only reports a measurement returns `Verdict.INFO`.
"""

import enum
from dataclasses import dataclass

import numpy as np

from .conventions import label, ordered_methods


class Verdict(enum.Enum):
    HOLDS = "holds"
    FAILS = "does not hold"
    INCONCLUSIVE = "inconclusive"
    NOT_RUN = "not run"
    INFO = "measured"

    @classmethod
    def of(cls, ok):
        return cls.HOLDS if bool(ok) else cls.FAILS


@dataclass(frozen=True)
class Outcome:
    verdict: Verdict
    observed: str
    rule: str = ""


def _means(table, cells, value="error_pct_mean"):
    """Cells x methods of `value` (methods in the paper's legend order)."""
    wide = table.pivot_table(index=cells, columns="method", values=value, sort=False)
    return wide[ordered_methods(table["method"])]


def _missing(table, *methods):
    absent = [m for m in methods if m not in set(table["method"])]
    if absent:
        return Outcome(Verdict.NOT_RUN, f"{', '.join(label(m) for m in absent)} not in the results")
    return None


def _select(table, where):
    for column, value in (where or {}).items():
        table = table[table[column].astype(str) == str(value)]
    return table


def tracks(table, *, cells, threshold, method="kssc", reference="ssc"):
    if (missing := _missing(table, method, reference)):
        return missing
    means = _means(table, cells)
    diff = (means[method] - means[reference]).abs()
    return Outcome(Verdict.of(diff.mean() <= threshold),
                   f"mean {diff.mean():.2f} pp, max {diff.max():.2f} pp over {len(diff)} cells",
                   f"mean over cells of "
                   f"|mean {label(method)} error - mean {label(reference)} error| "
                   f"<= {threshold} pp")


def below_competitors(table, *, cells, competitors, method="kssc"):
    if (missing := _missing(table, method)):
        return missing
    means = _means(table, cells)
    others = [c for c in competitors if c in means]
    if not others:
        return Outcome(Verdict.NOT_RUN, "no competitor in the results")
    beats = means[others].gt(means[method], axis=0).all(axis=1)
    return Outcome(Verdict.of(beats.all()), f"at {int(beats.sum())}/{len(beats)} levels",
                   f"{label(method)}'s mean error below each of "
                   f"{', '.join(label(o) for o in others)}'s at every level")


def rise_at_most(table, *, cell, method, threshold):
    if (missing := _missing(table, method)):
        return missing
    series = _means(table, [cell])[method].sort_index()
    rise = series.iloc[-1] - series.iloc[0]
    return Outcome(Verdict.of(rise <= threshold), f"{rise:+.1f} pp",
                   f"its mean error rises by <= {threshold} pp from the first to the last level")


def spread_grows(table, *, level, cells):
    spread = _means(table, [level, *cells]).groupby(level=level).std()
    rising = all(np.all(np.diff(spread[m].values) >= 0) for m in spread)
    observed = "; ".join(f"{label(m)} " + ", ".join(f"{v:.1f}" for v in spread[m].values)
                         for m in spread)
    return Outcome(Verdict.of(rising), observed,
                   f"the spread (std over the {' x '.join(cells)} cells) of the mean error "
                   f"does not decrease as {level} grows, for each method")


def lowest(table, *, method, where=None, value="error_pct_mean"):
    part = _select(table, where)
    if (missing := _missing(part, method)):
        return missing
    means = part.set_index("method")[value]
    best = means.idxmin()
    return Outcome(Verdict.of(best == method),
                   f"best is {label(best)} ({means.min():.1f}); "
                   + ", ".join(f"{label(m)} {v:.1f}" for m, v in means.items() if m != best),
                   f"{label(method)}'s {value} <= every other method's")


def at_most(table, *, where, value, threshold):
    part = _select(table, where)
    if part.empty:
        return Outcome(Verdict.NOT_RUN, f"no row with {where}")
    observed = float(part[value].iloc[0])
    return Outcome(Verdict.of(observed <= threshold), f"{observed:.2f}", f"{value} <= {threshold}")


def gap_at_most(table, *, method, reference, value, threshold):
    if (missing := _missing(table, method, reference)):
        return missing
    means = table.groupby("method")[value].mean()
    gap = means[reference] - means[method]
    return Outcome(Verdict.of(gap <= threshold),
                   f"{label(method)} {means[method]:.1f}, "
                   f"{label(reference)} {means[reference]:.1f}",
                   f"{label(reference)}'s {value} exceeds {label(method)}'s by <= {threshold}")


def time_ratio(frame, *, method, reference):
    """The median paper time per method over every trial (raw CSV); no verdict."""
    from .conventions import paper_time

    times = frame.assign(time=paper_time(frame)).groupby("method")["time"].median()
    if method not in times or reference not in times:
        return _missing(frame, method, reference)
    return Outcome(Verdict.INFO,
                   f"median time {label(method)} {times[method]:.3f} s, {label(reference)} "
                   f"{times[reference]:.3f} s (ratio {times[method] / times[reference]:.2f}); all: "
                   + ", ".join(f"{label(m)} {t:.3f}" for m, t in times.items()) + " s")


def _times_at(table, x):
    return table.pivot_table(index=x, columns="method", values="time_paper_s_median")


def time_within_factor_at_largest(table, *, method, others, factor, x="n_per_subspace"):
    t = _times_at(table, x)
    others = [m for m in others if m in t]
    if method not in t or not others:
        return Outcome(Verdict.NOT_RUN, "methods missing")
    largest = t.index.max()
    ratios = {m: t.loc[largest, method] / t.loc[largest, m] for m in others}
    ok = all(1 / factor <= r <= factor for r in ratios.values())
    return Outcome(Verdict.of(ok), ", ".join(f"{label(method)}/{label(m)} = {r:.2f}"
                                            for m, r in ratios.items()),
                   f"within a factor {factor:g} at the largest {x} = {largest}")


def time_below_share_at_largest(table, *, method, others, share, x="n_per_subspace"):
    t = _times_at(table, x)
    others = [m for m in others if m in t]
    if method not in t or not others:
        return Outcome(Verdict.NOT_RUN, "methods missing")
    ratios = {}
    for m in others:
        n = t[m].dropna().index.max()
        ratios[m] = (n, t.loc[n, method] / t.loc[n, m])
    return Outcome(Verdict.of(all(r <= share for _, r in ratios.values())),
                   ", ".join(f"{label(m)} ({x} = {n}) ratio {r:.3f}"
                             for m, (n, r) in ratios.items()),
                   f"{label(method)}'s time <= {share:g} of theirs at the largest {x} they ran")


def slowest_share_of_fastest(table, *, x, method_prefix, reference_prefix, share):
    t = _times_at(table, x)
    ours = [m for m in t if m.startswith(method_prefix)]
    refs = [m for m in t if m.startswith(reference_prefix)]
    if not ours or not refs:
        return Outcome(Verdict.NOT_RUN, "methods missing")
    n = t.index.max()
    ratio = t.loc[n, ours].max() / t.loc[n, refs].min()
    return Outcome(Verdict.of(ratio <= share), f"{100 * ratio:.1f}%",
                   f"slowest {method_prefix} variant <= {100 * share:g}% of the fastest "
                   f"{reference_prefix} variant at the largest {x} = {n}")


def faster_at_share_of_sizes(table, *, x, method, reference, share):
    t = _times_at(table, x)
    if method not in t or reference not in t:
        return Outcome(Verdict.NOT_RUN, "methods missing")
    faster = (t[method] < t[reference]).mean()
    return Outcome(Verdict.of(faster >= share), f"{100 * faster:.0f}% of sizes",
                   f"{label(method)} faster than {label(reference)} "
                   f"at >= {100 * share:g}% of the sizes")


def time_trend(table, *, x, method_prefix, direction):
    t = _times_at(table, x)
    methods = [m for m in t if m.startswith(method_prefix)]
    if not methods:
        return Outcome(Verdict.NOT_RUN, "methods missing")
    lo, hi = t.index.min(), t.index.max()
    sign = 1 if direction == "up" else -1
    ok = all(sign * (t.loc[hi, m] - t.loc[lo, m]) > 0 for m in methods)
    return Outcome(Verdict.of(ok),
                   ", ".join(f"{label(m)} {t.loc[lo, m]:.3f} -> {t.loc[hi, m]:.3f} s"
                             for m in methods),
                   f"time at {x} = {hi} {'>' if sign > 0 else '<'} at {x} = {lo}")


def loglog_slope(table, *, x, y):
    ok = table[table["n_trials"] > table["n_failed"]]
    parts = []
    for method, rows in ok.groupby("method", sort=False):
        if len(rows) > 1:
            slope = np.polyfit(np.log(rows[x]), np.log(rows[y]), 1)[0]
            parts.append(f"{label(method)} log-log slope {slope:.2f} over {x} = "
                         f"{rows[x].min()} .. {rows[x].max()}")
    return Outcome(Verdict.INFO, "; ".join(parts) or "fewer than two sizes")


def kssc_share_of_ssc(table, *, threshold):
    t = table.set_index("method")
    ks = sorted(int(c.split("_k")[1]) for c in table.columns if c.startswith("memory_gb_k"))
    hi = ks[-1]
    rel = max(t.loc[f"kssc_{v}", f"memory_gb_k{hi}"] / t.loc[f"ssc_{v}", f"memory_gb_k{hi}"]
              for v in ("exact", "relaxed"))
    relf = max(t.loc[f"kssc_{v}", f"flops_k{hi}"] / t.loc[f"ssc_{v}", f"flops_k{hi}"]
               for v in ("exact", "relaxed"))
    return Outcome(Verdict.of(max(rel, relf) <= threshold),
                   f"memory {100 * rel:.2f}%, FLOPs {100 * relf:.2f}%",
                   f"at k = {hi} kSSC needs <= {100 * threshold:g}% of SSC's memory and FLOPs "
                   f"(N = {int(t['n_samples'].iloc[0])})")


def sufficient_neighbours_beyond_dim(frame, *, subspace_dim, aggregate):
    nb = (frame[frame["panel"] == "neighbours"].groupby("n_neighbors")["sufficient_pct"]
          .agg(aggregate))
    reached = nb[nb >= 50]
    first = int(reached.index.min()) if len(reached) else None
    sv = frame[frame["panel"] == "singular_values"]
    held = []
    for _, rows in sv.groupby(["group"] + (["motion"] if "motion" in sv else [])):
        s2 = np.sort(rows["singular_value"].values)[::-1] ** 2
        held.append(100 * s2[:subspace_dim].sum() / s2.sum())
    tp1 = frame[(frame["panel"] == "neighbours") & (frame["n_neighbors"] == 1)]["tp_pct"].mean()
    return Outcome(Verdict.of(first is not None and first > subspace_dim),
                   f"the first {subspace_dim} singular values hold a median "
                   f"{np.median(held):.1f}% of the energy; sufficient TP first reached at "
                   f"k = {first}; TP% at k = 1: {tp1:.1f} (exact kNN)",
                   f"the first k with 'sufficient true positives' ({aggregate} over groups >= 50) "
                   f"> {subspace_dim}")


RULES = {rule.__name__: rule for rule in (
    tracks, below_competitors, rise_at_most, spread_grows, lowest, at_most, gap_at_most, time_ratio,
    time_within_factor_at_largest, time_below_share_at_largest, slowest_share_of_fastest,
    faster_at_share_of_sizes, time_trend, loglog_slope, kssc_share_of_ssc,
    sufficient_neighbours_beyond_dim)}


def evaluate(claim, frame):
    """The Outcome of a claim (its config entry) on its CSV (None: not run)."""
    if frame is None:
        return Outcome(Verdict.NOT_RUN, "no results")
    return RULES[claim["rule"]](frame, **(claim.get("params") or {}))
