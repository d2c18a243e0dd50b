"""The rules that turn a results table into a verdict on one of the paper's claims.

A claim is data in its experiment's config (`feeds.claims`): the claim's text, a `rule`
named here, its parameters (thresholds, methods, cells) and, optionally, the CSV it reads
(`csv`, default the experiment's summary table `<name>_table`). A rule takes that table
and the parameters and returns an `Outcome`: a `Verdict` and what we observed, in words.
The report renders outcomes; nothing here writes Markdown.

Verdicts on accuracy carry their uncertainty: each such rule computes a 95 % percentile
bootstrap interval (`_bootstrap`: over grid cells, trials paired across methods, sequences or
groups, as the rule says) and `decide` reads it against the claim's threshold: "holds" when
the whole interval is on the claimed side, "does not hold" when the whole interval is on the
other, `INCONCLUSIVE` when it straddles the threshold (or when the machine cannot test the
claim, e.g. fewer core counts than a trend needs). Rules that need the trials get the raw
CSV as `trials` (`evaluate`). `NOT_RUN` is rendered like the others, and a rule that only
reports a measurement returns `Verdict.INFO`. Timing rules compare medians (no interval).
"""

import enum
import inspect
import math
from dataclasses import dataclass

import numpy as np

from ._bootstrap import bootstrap_difference, bootstrap_mean, bootstrap_paired_difference
from .conventions import label, ordered_methods
from .publish.tables import interval


class Verdict(enum.Enum):
    HOLDS = "holds"
    FAILS = "does not hold"
    INCONCLUSIVE = "inconclusive"
    NOT_RUN = "not run"
    INFO = "measured"

    @classmethod
    def of(cls, ok):
        return cls.HOLDS if bool(ok) else cls.FAILS


def decide(low, high, threshold, *, claimed="below"):
    """The verdict of an interval [low, high] against `threshold`: HOLDS when the whole
    interval lies on the `claimed` side ("below": <= threshold, "above": > threshold),
    FAILS when it lies wholly on the other side, INCONCLUSIVE when it straddles it or is
    missing (NaN: one unit, no interval)."""
    if math.isnan(low) or math.isnan(high):
        return Verdict.INCONCLUSIVE
    if claimed == "below":
        return Verdict.HOLDS if high <= threshold else (
            Verdict.FAILS if low > threshold else Verdict.INCONCLUSIVE)
    return Verdict.HOLDS if low > threshold else (
        Verdict.FAILS if high <= threshold else Verdict.INCONCLUSIVE)


def decide_within(low, high, band):
    """The verdict of an interval [low, high] against a two-sided `band` (lo, hi): HOLDS
    when the interval lies inside the band, FAILS when it lies wholly outside it,
    INCONCLUSIVE when it straddles an edge or is missing (NaN)."""
    if math.isnan(low) or math.isnan(high):
        return Verdict.INCONCLUSIVE
    if band[0] <= low and high <= band[1]:
        return Verdict.HOLDS
    if high < band[0] or low > band[1]:
        return Verdict.FAILS
    return Verdict.INCONCLUSIVE


def combine(verdicts):
    """One verdict from several that must all hold: any FAILS fails, else any INCONCLUSIVE."""
    verdicts = list(verdicts)
    for state in (Verdict.NOT_RUN, Verdict.FAILS, Verdict.INCONCLUSIVE):
        if state in verdicts:
            return state
    return Verdict.HOLDS


def _interval(result, digits=2):
    if math.isnan(result["low"]):
        return "no interval"
    return "95 % interval " + interval(None, result["low"], result["high"], f"{{:.{digits}f}}",
                                       sign=True)


def _paired(trials, cells, method, other, value="error_pct"):
    """Bootstrap of mean(other - method) over the tasks both ran (paired on cells + seed: one
    seed per (cell, trial) task, so a sequence's draws pair up too)."""
    keys = [*cells, "seed"]
    ours = trials[trials["method"] == method].groupby(keys)[value].mean()
    theirs = trials[trials["method"] == other].groupby(keys)[value].mean()
    common = ours.index.intersection(theirs.index)
    return bootstrap_paired_difference(theirs[common].to_numpy(), ours[common].to_numpy())


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
    result = bootstrap_mean(diff.to_numpy())
    return Outcome(decide(result["low"], result["high"], threshold),
                   f"mean {diff.mean():.2f} pp ({_interval(result)}, over cells), "
                   f"max {diff.max():.2f} pp over {len(diff)} cells",
                   f"mean over cells of "
                   f"|mean {label(method)} error - mean {label(reference)} error| "
                   f"<= {threshold} pp (bootstrap over cells)")


def below_competitors(table, *, cells, competitors, method="kssc", trials=None):
    if (missing := _missing(table, method)):
        return missing
    means = _means(table, cells)
    others = [c for c in competitors if c in means]
    if not others:
        return Outcome(Verdict.NOT_RUN, "no competitor in the results")
    beats = means[others].gt(means[method], axis=0).all(axis=1)
    rule = (f"{label(method)}'s mean error below each of "
            f"{', '.join(label(o) for o in others)}'s at every level")
    if trials is None:
        return Outcome(Verdict.of(beats.all()), f"at {int(beats.sum())}/{len(beats)} levels",
                       rule)
    verdicts, worst = [], None
    for level, part in trials.groupby(cells, sort=True):
        level = ", ".join(f"{c} = {v}" for c, v in zip(cells, np.atleast_1d(level), strict=True))
        for other in others:
            result = _paired(part, cells, method, other)
            verdicts.append(decide(result["low"], result["high"], 0.0, claimed="above"))
            if worst is None or result["mean"] < worst[2]["mean"]:
                worst = (level, other, result)
    level, other, result = worst
    return Outcome(combine(verdicts),
                   f"below each on average at {int(beats.sum())}/{len(beats)} levels; of "
                   f"{len(verdicts)} (level, competitor) pairs, {label(method)} is lower with "
                   f"the interval above 0 in {verdicts.count(Verdict.HOLDS)}, higher with it "
                   f"below 0 in {verdicts.count(Verdict.FAILS)}, undecided in "
                   f"{verdicts.count(Verdict.INCONCLUSIVE)}; smallest: {label(other)} - "
                   f"{label(method)} at {level} {result['mean']:+.1f} pp "
                   f"({_interval(result, 1)})",
                   rule + " (paired bootstrap over trials at each level)")


def rise_at_most(table, *, cell, method, threshold, trials=None):
    if (missing := _missing(table, method)):
        return missing
    series = _means(table, [cell])[method].sort_index()
    rise = series.iloc[-1] - series.iloc[0]
    rule = f"its mean error rises by <= {threshold} pp from the first to the last level"
    if trials is None:
        return Outcome(Verdict.of(rise <= threshold), f"{rise:+.1f} pp", rule)
    ours = trials[trials["method"] == method]
    result = bootstrap_difference(ours.loc[ours[cell] == series.index[-1], "error_pct"],
                                  ours.loc[ours[cell] == series.index[0], "error_pct"])
    return Outcome(decide(result["low"], result["high"], threshold),
                   f"{rise:+.1f} pp ({_interval(result, 1)})",
                   rule + " (bootstrap over the two levels' trials)")


def spread_grows(table, *, level, cells):
    spread = _means(table, [level, *cells]).groupby(level=level).std()
    rising = all(np.all(np.diff(spread[m].values) >= 0) for m in spread)
    observed = "; ".join(f"{label(m)} " + ", ".join(f"{v:.1f}" for v in spread[m].values)
                         for m in spread)
    return Outcome(Verdict.of(rising), observed,
                   f"the spread (std over the {' x '.join(cells)} cells) of the mean error "
                   f"does not decrease as {level} grows, for each method")


def lowest(table, *, method, where=None, value="error_pct_mean", trials=None):
    part = _select(table, where)
    if (missing := _missing(part, method)):
        return missing
    means = part.set_index("method")[value]
    best = means.idxmin()
    observed = (f"best is {label(best)} ({means.min():.1f}); "
                + ", ".join(f"{label(m)} {v:.1f}" for m, v in means.items() if m != best))
    rule = f"{label(method)}'s {value} <= every other method's"
    if trials is None:
        return Outcome(Verdict.of(best == method), observed, rule)
    rows = _select(trials, where)
    cells = list((where or {}).keys())
    results = {m: _paired(rows, cells, method, m, value.removesuffix("_mean"))
               for m in means.index if m != method}
    verdicts = [decide(r["low"], r["high"], 0.0, claimed="above") for r in results.values()]
    closest = min(results, key=lambda m: results[m]["low"])
    r = results[closest]
    return Outcome(combine(verdicts),
                   observed + f"; closest: {label(closest)} - {label(method)} "
                   f"{r['mean']:+.1f} pp ({_interval(r, 1)})",
                   rule + ": each other method's paired difference to it > 0 "
                   "(bootstrap over trials)")


def at_most(table, *, where, value, threshold):
    part = _select(table, where)
    if part.empty:
        return Outcome(Verdict.NOT_RUN, f"no row with {where}")
    observed = float(part[value].iloc[0])
    base = value.removesuffix("_mean")
    if f"{base}_ci_low" not in part:
        return Outcome(Verdict.of(observed <= threshold), f"{observed:.2f}",
                       f"{value} <= {threshold}")
    result = {"low": float(part[f"{base}_ci_low"].iloc[0]),
              "high": float(part[f"{base}_ci_high"].iloc[0])}
    return Outcome(decide(result["low"], result["high"], threshold),
                   f"{observed:.2f} ({_interval(result)})",
                   f"{value} <= {threshold} (the table's bootstrap interval)")


def gap_at_most(table, *, method, reference, value, threshold, trials=None):
    if (missing := _missing(table, method, reference)):
        return missing
    means = table.groupby("method")[value].mean()
    gap = means[reference] - means[method]
    observed = f"{label(method)} {means[method]:.1f}, {label(reference)} {means[reference]:.1f}"
    rule = f"{label(reference)}'s {value} exceeds {label(method)}'s by <= {threshold}"
    if trials is None:
        return Outcome(Verdict.of(gap <= threshold), observed, rule)
    result = _paired(trials, [], method, reference, value.removesuffix("_mean"))
    return Outcome(decide(result["low"], result["high"], threshold),
                   observed + f"; gap {result['mean']:+.1f} ({_interval(result, 1)})",
                   rule + " (paired bootstrap over trials)")


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


def time_trend(table, *, x, method_prefix, direction, min_levels=4):
    t = _times_at(table, x)
    methods = [m for m in t if m.startswith(method_prefix)]
    if not methods:
        return Outcome(Verdict.NOT_RUN, "methods missing")
    lo, hi = t.index.min(), t.index.max()
    sign = 1 if direction == "up" else -1
    ok = all(sign * (t.loc[hi, m] - t.loc[lo, m]) > 0 for m in methods)
    observed = ", ".join(f"{label(m)} {t.loc[lo, m]:.3f} -> {t.loc[hi, m]:.3f} s"
                         for m in methods)
    rule = (f"time at {x} = {hi} {'>' if sign > 0 else '<'} at {x} = {lo}, "
            f"measured at >= {min_levels} values of {x}")
    if len(t.index) < min_levels:
        return Outcome(Verdict.INCONCLUSIVE,
                       f"{observed}; only {len(t.index)} values of {x} on this machine "
                       f"({', '.join(str(v) for v in t.index)}): a trend cannot be tested", rule)
    return Outcome(Verdict.of(ok), observed, rule)


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


def _dims(table, energy):
    """The groups' estimated dimensions at `energy`, from the observation summary table."""
    return table[f"estimated_dim_{round(100 * energy)}"].to_numpy(dtype=float)


def subspace_dim_near(table, *, subspace_dim, tolerance, energy=0.95):
    dims = _dims(table, energy)
    if len(dims) == 0:
        return Outcome(Verdict.NOT_RUN, "no singular values in the results")
    result = bootstrap_mean(dims)
    verdict = decide_within(result["low"], result["high"],
                            (subspace_dim - tolerance, subspace_dim + tolerance))
    also = _dims(table, 0.99)
    return Outcome(verdict,
                   f"smallest d holding {100 * energy:g} % of the energy: mean "
                   f"{result['mean']:.1f} (95 % interval "
                   f"{interval(None, result['low'], result['high'], '{:.1f}')} over "
                   f"{len(dims)} groups), median "
                   f"{np.median(dims):g}; 99 %: median {np.median(also):g}; "
                   f"the paper reads d = {subspace_dim}",
                   f"the estimated d (bootstrap over groups) within {subspace_dim} +- {tolerance}")


def _first_sufficient(frame, dim, aggregate):
    """The first k at which the aggregate over groups of 'the mean point has >= dim true
    neighbours' reaches 50 %, or None within the stored k."""
    nb = frame[frame["panel"] == "neighbours"]
    share = (100.0 * (nb["tp_per_point"] >= dim)).groupby(nb["n_neighbors"]).agg(aggregate)
    reached = share[share >= 50]
    return int(reached.index.min()) if len(reached) else None


def sufficient_neighbours_beyond_dim(table, *, subspace_dim, aggregate, energy=0.95,
                                     trials=None):
    if trials is None:
        return Outcome(Verdict.NOT_RUN, "no neighbour rows in the results")
    nb = trials[trials["panel"] == "neighbours"]
    k_max = int(nb["n_neighbors"].max())
    dims = _dims(table, energy)
    if len(dims) == 0 or nb.empty:
        return Outcome(Verdict.NOT_RUN, "no singular values or neighbour rows in the results")
    result = bootstrap_mean(dims)
    low, high = ((result["low"], result["high"]) if not math.isnan(result["low"])
                 else (result["mean"], result["mean"]))
    candidates = sorted({*range(math.ceil(low), math.floor(high) + 1), round(result["mean"])})
    firsts = {d: _first_sufficient(trials, d, aggregate) for d in candidates}
    verdicts = [Verdict.of((k if k is not None else k_max + 1) > d) for d, k in firsts.items()]
    verdict = (verdicts[0] if len(set(verdicts)) == 1 else Verdict.INCONCLUSIVE)
    paper_first = _first_sufficient(trials, subspace_dim, aggregate)
    tp1 = nb[nb["n_neighbors"] == 1]["tp_pct"].mean()

    def shown(k):
        return f"k = {k}" if k is not None else f"not within k <= {k_max}"

    return Outcome(verdict,
                   "; ".join(f"for d = {d}: first sufficient {shown(k)}"
                             for d, k in firsts.items())
                   + f" (estimated d: {result['mean']:.1f}, interval "
                   f"{interval(None, low, high, '{:.1f}')}); "
                   f"for the paper's d = {subspace_dim}: {shown(paper_first)}; "
                   f"TP% at k = 1: {tp1:.1f} (exact kNN)",
                   f"the first k with 'sufficient true positives' (mean true neighbours per "
                   f"point >= d; {aggregate} over groups >= 50 %) > d, for every integer d in "
                   f"the interval of the estimated d ({100 * energy:g} % of the energy)")


RULES = {rule.__name__: rule for rule in (
    tracks, below_competitors, rise_at_most, spread_grows, lowest, at_most, gap_at_most, time_ratio,
    time_within_factor_at_largest, time_below_share_at_largest, slowest_share_of_fastest,
    faster_at_share_of_sizes, time_trend, loglog_slope, kssc_share_of_ssc,
    subspace_dim_near, sufficient_neighbours_beyond_dim)}


def evaluate(claim, frame, trials=None):
    """The Outcome of a claim (its config entry) on its CSV (None: not run); `trials`, the
    experiment's raw CSV, goes to the rules that resample trials."""
    if frame is None:
        return Outcome(Verdict.NOT_RUN, "no results")
    rule = RULES[claim["rule"]]
    params = dict(claim.get("params") or {})
    if trials is not None and "trials" in inspect.signature(rule).parameters:
        params["trials"] = trials
    return rule(frame, **params)
