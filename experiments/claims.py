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
reports a measurement returns `Verdict.INFO`.

Three floors, stated once here, keep a verdict from resting on too little:
- `MIN_UNITS`: a bootstrapped verdict needs at least this many independent units (cells,
  sequences, draws, groups); below it the verdict is INCONCLUSIVE, saying why. A percentile
  bootstrap on n units cannot reach beyond the sample's range (on n = 2 it is [min, max]),
  and its coverage of a mean falls well short of 95 % below about 10 units.
- `FLOOR_PCT`, `CEILING_SHARE`: a grid cell where both methods are saturated (mean errors
  both <= FLOOR_PCT, or both >= CEILING_SHARE of the chance error 100 (1 - 1/K) for K groups)
  cannot show a gap, so `tracks` judges the other cells and reports these apart.
- `TIME_FLOOR_S`, `TIME_FLOOR_SHARE`: timing rules compare medians (no interval); a
  difference smaller than both floors is timer noise and decides nothing.
"""

import enum
import inspect
import math
from dataclasses import dataclass

import numpy as np

from ._bootstrap import bootstrap_mean, bootstrap_paired_difference
from ._format import interval
from .conventions import label, ordered_methods

MIN_UNITS = 10
FLOOR_PCT = 1.0
CEILING_SHARE = 0.75
TIME_FLOOR_S = 0.05
TIME_FLOOR_SHARE = 0.10


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


def decide_units(result, threshold, *, claimed="below", band=None):
    """`decide` (or `decide_within` a `band`) on a bootstrap result, INCONCLUSIVE when it
    rests on fewer than MIN_UNITS units (`result["n"]`)."""
    if result["n"] < MIN_UNITS:
        return Verdict.INCONCLUSIVE
    if band is not None:
        return decide_within(result["low"], result["high"], band)
    return decide(result["low"], result["high"], threshold, claimed=claimed)


def _few(result, unit):
    """The reason a verdict is withheld, or "" when `result` rests on enough units."""
    if result["n"] >= MIN_UNITS:
        return ""
    return f"; only {result['n']} independent {unit} (< MIN_UNITS = {MIN_UNITS}): no verdict"


def time_order(a, b):
    """+1 if time a is above time b, -1 if below, 0 when the difference is within the timer's
    noise: below TIME_FLOOR_S seconds or below TIME_FLOOR_SHARE of the larger time."""
    if abs(a - b) < max(TIME_FLOOR_S, TIME_FLOOR_SHARE * max(a, b)):
        return 0
    return 1 if a > b else -1


def _interval(result, digits=2):
    if math.isnan(result["low"]):
        return "no interval"
    return "95 % interval " + interval(None, result["low"], result["high"], f"{{:.{digits}f}}",
                                       sign=True)


def _paired(trials, cells, method, other, value="error_pct", same_data=False, unit="seed"):
    """Bootstrap of mean(other - method) over the tasks both ran (paired on cells + `unit`,
    averaged within a unit: one seed per (cell, trial) task, so a sequence's draws pair up
    too). With `same_data` (every trial refits the same data; only the estimators' seeds
    differ), trials whose two results are identical are one unit, not several."""
    keys = [*cells, unit]
    ours = trials[trials["method"] == method].groupby(keys)[value].mean()
    theirs = trials[trials["method"] == other].groupby(keys)[value].mean()
    common = ours.index.intersection(theirs.index)
    pairs = np.column_stack([theirs[common].to_numpy(), ours[common].to_numpy()])
    if same_data:
        pairs = np.unique(pairs, axis=0)
    return bootstrap_paired_difference(pairs[:, 0], pairs[:, 1])


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


def saturated(errors, n_groups):
    """Per row of `errors` (cells x the two methods' mean errors, %): both at the floor
    (<= FLOOR_PCT) or both near chance (>= CEILING_SHARE of 100 (1 - 1/n_groups))."""
    ceiling = CEILING_SHARE * 100 * (1 - 1 / n_groups)
    return (errors <= FLOOR_PCT).all(axis=1) | (errors >= ceiling).all(axis=1)


def tracks(table, *, cells, threshold, n_groups, method="kssc", reference="ssc"):
    if (missing := _missing(table, method, reference)):
        return missing
    means = _means(table, cells)[[method, reference]]
    diff = (means[method] - means[reference]).abs()
    flat = saturated(means, n_groups)
    informative = diff[~flat]
    result = bootstrap_mean(informative.to_numpy())
    apart = (f"; {int(flat.sum())} saturated cells apart (max {diff[flat].max():.2f} pp)"
             if flat.any() else "; no saturated cell")
    observed = (f"mean {informative.mean():.2f} pp ({_interval(result)}), max "
                f"{informative.max():.2f} pp over {len(informative)} informative cells"
                if len(informative) else "no informative cell")
    return Outcome(decide_units(result, threshold),
                   observed + apart + _few(result, "cell(s)"),
                   f"mean over the informative cells of "
                   f"|mean {label(method)} error - mean {label(reference)} error| "
                   f"<= {threshold} pp (bootstrap over cells); saturated cells (both <= "
                   f"{FLOOR_PCT:g} % or both >= {100 * CEILING_SHARE:g} % of the chance error "
                   f"100 (1 - 1/{n_groups})) set apart")


def tracks_per_level(table, *, cells, band, method="kssc", reference="ssc", unit="seed",
                     trials=None):
    """The paper's "closely tracks (matches) SSC at every level", level by level: at each
    level of `cells`, mean(method - reference) paired on the same data (`unit`: a trial's
    seed, or a sequence) with its bootstrap interval over those units, read against `band`
    (lo, hi) in points. HOLDS when every level's interval lies within the band, FAILS when
    one lies wholly outside it; a level with fewer than MIN_UNITS units decides nothing."""
    if (missing := _missing(table, method, reference)):
        return missing
    band = (float(band[0]), float(band[1]))
    rule = (f"at every level of {' x '.join(cells)}, mean({label(method)} - {label(reference)}) "
            f"error paired on the same data (bootstrap over {unit}s) within "
            f"[{band[0]:+g}, {band[1]:+g}] pp")
    if trials is None:
        return Outcome(Verdict.NOT_RUN, "no trials to pair", rule)
    verdicts, parts, few = [], [], 0
    for level, part in trials.groupby(cells, sort=True):
        result = _paired(part, cells, reference, method, unit=unit)
        verdicts.append(decide_units(result, None, band=band))
        few += result["n"] < MIN_UNITS
        level = ", ".join(f"{v:g}" if isinstance(v, float) else str(v)
                          for v in np.atleast_1d(level))
        parts.append(f"{level}: {result['mean']:+.2f} "
                     f"{interval(None, result['low'], result['high'], '{:.2f}', sign=True)} "
                     f"(n = {result['n']})")
    return Outcome(combine(verdicts),
                   f"of {len(verdicts)} levels, interval within the band at "
                   f"{verdicts.count(Verdict.HOLDS)}, wholly outside at "
                   f"{verdicts.count(Verdict.FAILS)}, straddling an edge at "
                   f"{verdicts.count(Verdict.INCONCLUSIVE) - few}"
                   + (f", fewer than MIN_UNITS = {MIN_UNITS} {unit}s at {few}" if few else "")
                   + f"; per {' x '.join(cells)} ({label(method)} - {label(reference)}, "
                   f"95 % interval): " + "; ".join(parts),
                   rule)


def below_competitors(table, *, cells, competitors, method="kssc", unit="seed", trials=None):
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
            result = _paired(part, cells, method, other, unit=unit)
            verdicts.append(decide_units(result, 0.0, claimed="above"))
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
                   rule + f" (paired bootstrap over {unit}s at each level)")


def rise_at_most(table, *, cell, method, threshold, pair_on, trials=None):
    """`pair_on`: the column naming the unit seen at every level (a sequence), so the rise is
    a paired difference per unit."""
    if (missing := _missing(table, method)):
        return missing
    series = _means(table, [cell])[method].sort_index()
    rise = series.iloc[-1] - series.iloc[0]
    rule = f"its mean error rises by <= {threshold} pp from the first to the last level"
    if trials is None:
        return Outcome(Verdict.of(rise <= threshold), f"{rise:+.1f} pp", rule)
    ours = trials[trials["method"] == method]
    first, last = (ours[ours[cell] == level].groupby(pair_on)["error_pct"].mean()
                   for level in (series.index[0], series.index[-1]))
    common = first.index.intersection(last.index)
    result = bootstrap_paired_difference(last[common].to_numpy(), first[common].to_numpy())
    return Outcome(decide_units(result, threshold),
                   f"{rise:+.1f} pp; paired over {result['n']} {pair_on}s "
                   f"{result['mean']:+.1f} pp ({_interval(result, 1)})"
                   + _few(result, f"{pair_on}s"),
                   rule + f" (paired bootstrap over the {pair_on}s seen at both levels)")


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
    verdicts = [decide_units(r, 0.0, claimed="above") for r in results.values()]
    closest = min(results, key=lambda m: results[m]["low"])
    r = results[closest]
    return Outcome(combine(verdicts),
                   observed + f"; closest: {label(closest)} - {label(method)} "
                   f"{r['mean']:+.1f} pp ({_interval(r, 1)})" + _few(r, "trial(s)"),
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
              "high": float(part[f"{base}_ci_high"].iloc[0]), "n": _table_units(part)}
    return Outcome(decide_units(result, threshold),
                   f"{observed:.2f} ({_interval(result)}, n = {result['n']})"
                   + _few(result, "unit(s)"),
                   f"{value} <= {threshold} (the table's bootstrap interval)")


def _table_units(row):
    """The independent units behind a summary row's interval: its sequences when it has
    them (the trials of a sequence share its data), else its scored trials."""
    if "n_sequences" in row:
        return int(row["n_sequences"].iloc[0])
    failed = int(row["n_failed"].iloc[0]) if "n_failed" in row else 0
    return int(row["n_trials"].iloc[0]) - failed


def gap_at_most(table, *, method, reference, value, threshold, same_data=False, trials=None):
    if (missing := _missing(table, method, reference)):
        return missing
    means = table.groupby("method")[value].mean()
    gap = means[reference] - means[method]
    observed = f"{label(method)} {means[method]:.1f}, {label(reference)} {means[reference]:.1f}"
    rule = f"{label(reference)}'s {value} exceeds {label(method)}'s by <= {threshold}"
    if trials is None:
        return Outcome(Verdict.of(gap <= threshold), observed, rule)
    result = _paired(trials, [], method, reference, value.removesuffix("_mean"), same_data)
    unit = "distinct trial(s)" if same_data else "trial(s)"
    rule += (" (paired bootstrap over trials; trials of the same data with identical results "
             "are one unit)" if same_data else " (paired bootstrap over trials)")
    return Outcome(decide_units(result, threshold),
                   observed + f"; gap {result['mean']:+.1f} ({_interval(result, 1)})"
                   + _few(result, unit), rule)


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
    ours = t.loc[largest, method]
    ratios = {m: ours / t.loc[largest, m] for m in others}
    verdicts = [_ratio_verdict(ours, t.loc[largest, m], 1 / factor <= r <= factor)
                for m, r in ratios.items()]
    return Outcome(combine(verdicts), ", ".join(f"{label(method)}/{label(m)} = {r:.2f}"
                                                for m, r in ratios.items()),
                   f"within a factor {factor:g} at the largest {x} = {largest} "
                   f"(no verdict on times within the timing floor)")


def time_below_share_at_largest(table, *, method, others, share, x="n_per_subspace"):
    t = _times_at(table, x)
    others = [m for m in others if m in t]
    if method not in t or not others:
        return Outcome(Verdict.NOT_RUN, "methods missing")
    ratios, verdicts = {}, []
    for m in others:
        n = t[m].dropna().index.max()
        ratios[m] = (n, t.loc[n, method] / t.loc[n, m])
        verdicts.append(_ratio_verdict(t.loc[n, method], t.loc[n, m], ratios[m][1] <= share))
    return Outcome(combine(verdicts),
                   ", ".join(f"{label(m)} ({x} = {n}) ratio {r:.3f}"
                             for m, (n, r) in ratios.items()),
                   f"{label(method)}'s time <= {share:g} of theirs at the largest {x} they ran "
                   f"(no verdict on times within the timing floor)")


def _ratio_verdict(time, other, ok):
    """The verdict `ok` on a ratio of two times, INCONCLUSIVE when the two differ by less
    than the timing floor (the ratio is then timer noise)."""
    return Verdict.of(ok) if time_order(time, other) else Verdict.INCONCLUSIVE


def _time_verdict(time, bound):
    """HOLDS when `time` is below `bound` beyond the timing floor, FAILS when above it,
    INCONCLUSIVE within it."""
    return {-1: Verdict.HOLDS, 0: Verdict.INCONCLUSIVE, 1: Verdict.FAILS}[time_order(time, bound)]


def slowest_share_of_fastest(table, *, x, method_prefix, reference_prefix, share):
    t = _times_at(table, x)
    ours = [m for m in t if m.startswith(method_prefix)]
    refs = [m for m in t if m.startswith(reference_prefix)]
    if not ours or not refs:
        return Outcome(Verdict.NOT_RUN, "methods missing")
    n = t.index.max()
    slowest, fastest = t.loc[n, ours].max(), t.loc[n, refs].min()
    return Outcome(_ratio_verdict(slowest, fastest, slowest <= share * fastest),
                   f"{100 * slowest / fastest:.1f}% ({slowest:.3f} s vs {fastest:.3f} s)",
                   f"slowest {method_prefix} variant <= {100 * share:g}% of the fastest "
                   f"{reference_prefix} variant at the largest {x} = {n} "
                   f"(no verdict on times within the timing floor)")


def faster_at_share_of_sizes(table, *, x, method, reference, share):
    t = _times_at(table, x)
    if method not in t or reference not in t:
        return Outcome(Verdict.NOT_RUN, "methods missing")
    order = np.array([time_order(a, b) for a, b in zip(t[method], t[reference], strict=True)])
    faster, slower, n = int((order < 0).sum()), int((order > 0).sum()), len(order)
    verdict = (Verdict.HOLDS if faster >= share * n else
               Verdict.FAILS if n - slower < share * n else Verdict.INCONCLUSIVE)
    return Outcome(verdict,
                   f"faster at {faster}, slower at {slower}, within the timing floor at "
                   f"{n - faster - slower} of {n} sizes",
                   f"{label(method)} faster than {label(reference)} beyond the timing floor "
                   f"(>= {TIME_FLOOR_S:g} s and >= {100 * TIME_FLOOR_SHARE:g} %) at >= "
                   f"{100 * share:g}% of the sizes; no verdict while the sizes within the "
                   f"floor could tip it")


def time_trend(table, *, x, method_prefix, direction, min_levels=4):
    t = _times_at(table, x)
    methods = [m for m in t if m.startswith(method_prefix)]
    if not methods:
        return Outcome(Verdict.NOT_RUN, "methods missing")
    lo, hi = t.index.min(), t.index.max()
    sign = 1 if direction == "up" else -1
    # "up": the time at lo is below the time at hi; "down": the time at hi is below lo's.
    first, second = (lo, hi) if sign > 0 else (hi, lo)
    verdicts = [_time_verdict(t.loc[first, m], t.loc[second, m]) for m in methods]
    observed = ", ".join(f"{label(m)} {t.loc[lo, m]:.3f} -> {t.loc[hi, m]:.3f} s"
                         for m in methods)
    rule = (f"time at {x} = {hi} {'>' if sign > 0 else '<'} at {x} = {lo}, "
            f"measured at >= {min_levels} values of {x}")
    if len(t.index) < min_levels:
        return Outcome(Verdict.INCONCLUSIVE,
                       f"{observed}; only {len(t.index)} values of {x} on this machine "
                       f"({', '.join(str(v) for v in t.index)}): a trend cannot be tested", rule)
    return Outcome(combine(verdicts), observed, rule + " (beyond the timing floor)")


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
    band = (subspace_dim - tolerance, subspace_dim + tolerance)
    also = _dims(table, 0.99)
    return Outcome(decide_units(result, None, band=band),
                   f"d = 1 + the directions holding {100 * energy:g} % of the energy beyond "
                   f"the first singular value: mean {result['mean']:.1f} (95 % interval "
                   f"{interval(None, result['low'], result['high'], '{:.1f}')} over "
                   f"{len(dims)} groups), median {np.median(dims):g}; 99 %: median "
                   f"{np.median(also):g}; the paper reads d = {subspace_dim}"
                   + _few(result, "groups"),
                   f"the estimated d (bootstrap over groups) within {subspace_dim} +- {tolerance}")


def _first_sufficient(frame, dim, aggregate):
    """The first k at which the aggregate over groups of 'the mean point has >= dim true
    neighbours' reaches 50 %, or None within the stored k."""
    nb = frame[frame["panel"] == "neighbours"]
    share = (100.0 * (nb["tp_per_point"] >= dim)).groupby(nb["n_neighbors"]).agg(aggregate)
    reached = share[share >= 50]
    return int(reached.index.min()) if len(reached) else None


def sufficient_neighbours_beyond_dim(table, *, subspace_dim, aggregate, min_fp_pct,
                                     energy=0.95, trials=None):
    """The paper: the k needed for sufficient true positives exceeds d, so set k well above d.
    Any false neighbour at all makes that first k exceed d, so the rule asks for a margin:
    kNN at k = d leaves >= `min_fp_pct` % false neighbours (`aggregate` over groups), for every
    integer d in the estimated d's interval."""
    if trials is None:
        return Outcome(Verdict.NOT_RUN, "no neighbour rows in the results")
    nb = trials[trials["panel"] == "neighbours"]
    dims = _dims(table, energy)
    if len(dims) == 0 or nb.empty:
        return Outcome(Verdict.NOT_RUN, "no singular values or neighbour rows in the results")
    k_max = int(nb["n_neighbors"].max())
    result = bootstrap_mean(dims)
    low, high = ((result["low"], result["high"]) if not math.isnan(result["low"])
                 else (result["mean"], result["mean"]))
    candidates = sorted({*range(math.ceil(low), math.floor(high) + 1), round(result["mean"])})
    fp = nb.groupby("n_neighbors")["fp_pct"].agg(aggregate)
    verdicts = [Verdict.of(fp[d] >= min_fp_pct) if d in fp.index else Verdict.INCONCLUSIVE
                for d in candidates]
    verdict = verdicts[0] if len(set(verdicts)) == 1 else Verdict.INCONCLUSIVE
    if result["n"] < MIN_UNITS:
        verdict = Verdict.INCONCLUSIVE

    def shown(d):
        k = _first_sufficient(trials, d, aggregate)
        first = f"k = {k}" if k is not None else f"not within k <= {k_max}"
        at_d = f"FP {fp[d]:.1f} % at k = d" if d in fp.index else f"d > k_max = {k_max}"
        return f"for d = {d}: {at_d}, first sufficient {first}"

    return Outcome(verdict,
                   "; ".join(shown(d) for d in candidates)
                   + f" (estimated d: {result['mean']:.1f}, interval "
                   f"{interval(None, low, high, '{:.1f}')}); the paper's "
                   + shown(subspace_dim).removeprefix("for ") + " (exact kNN)"
                   + _few(result, "groups"),
                   f"kNN at k = d leaves >= {min_fp_pct:g} % false neighbours ({aggregate} over "
                   f"groups), so k must exceed d by a margin, for every integer d in the "
                   f"interval of the estimated d ({100 * energy:g} % of the energy beyond the "
                   f"first direction)")


RULES = {rule.__name__: rule for rule in (
    tracks, tracks_per_level, below_competitors, rise_at_most, spread_grows, lowest, at_most,
    gap_at_most, time_ratio, time_within_factor_at_largest, time_below_share_at_largest,
    slowest_share_of_fastest, faster_at_share_of_sizes, time_trend, loglog_slope, kssc_share_of_ssc,
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
