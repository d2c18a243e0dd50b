"""Verdicts with uncertainty (experiments/claims.py) on hand-made CSV rows: each rule can
hold, fail and be inconclusive."""

import numpy as np
import pandas as pd
import pytest

from experiments import claims
from experiments._observation import singular_value_rows, summarise_dims
from experiments.claims import (
    MIN_UNITS,
    Verdict,
    decide,
    decide_units,
    decide_within,
    evaluate,
    time_order,
)


def test_decide_reads_the_interval_against_the_threshold():
    assert decide(0.5, 1.5, 2.0) is Verdict.HOLDS
    assert decide(2.5, 3.0, 2.0) is Verdict.FAILS
    assert decide(1.0, 3.0, 2.0) is Verdict.INCONCLUSIVE
    assert decide(np.nan, np.nan, 2.0) is Verdict.INCONCLUSIVE
    assert decide(0.1, 0.3, 0.0, claimed="above") is Verdict.HOLDS
    assert decide(-0.3, -0.1, 0.0, claimed="above") is Verdict.FAILS


def test_decide_within_reads_the_interval_against_a_band():
    assert decide_within(3.2, 4.5, (3, 5)) is Verdict.HOLDS
    assert decide_within(5.5, 6.0, (3, 5)) is Verdict.FAILS
    assert decide_within(1.0, 2.5, (3, 5)) is Verdict.FAILS
    assert decide_within(4.0, 5.5, (3, 5)) is Verdict.INCONCLUSIVE
    assert decide_within(np.nan, np.nan, (3, 5)) is Verdict.INCONCLUSIVE


def tracks_table(gaps, ssc=10.0):
    rows = []
    for cell, gap in enumerate(gaps):
        rows += [{"cell": cell, "method": "ssc", "error_pct_mean": ssc},
                 {"cell": cell, "method": "kssc", "error_pct_mean": ssc + gap}]
    return pd.DataFrame(rows)


TRACKS = {"rule": "tracks", "params": {"cells": ["cell"], "threshold": 2.0, "n_groups": 5}}


@pytest.mark.parametrize("gaps, verdict", [
    ([0.5, -1.0, 0.8, 0.2, 1.0, -0.5] * 2, Verdict.HOLDS),
    ([9.0, -8.0, 10.0, 7.5, 12.0, 9.5] * 2, Verdict.FAILS),
    ([0.0, 0.5, 6.0, 0.2, 4.0, 0.1] * 2, Verdict.INCONCLUSIVE),   # mean 1.8, interval over 2
    ([9.0, -8.0, 10.0, 7.5, 12.0, 9.5], Verdict.INCONCLUSIVE),    # 6 cells < MIN_UNITS
])
def test_tracks_bootstraps_over_cells(gaps, verdict):
    assert evaluate(TRACKS, tracks_table(gaps)).verdict is verdict


def test_tracks_sets_saturated_cells_apart():
    # Twelve cells where both methods are at the floor or near chance (100 (1 - 1/5) = 80,
    # 3/4 of it 60) agree; the six cells between them, the informative ones, show 4-pp gaps.
    floor, chance = tracks_table([0.0] * 12, ssc=0.0), tracks_table([0.5] * 12, ssc=70.0)
    informative = tracks_table([4.0, -4.5, 3.5, 5.0, -4.0, 4.5] * 2, ssc=30.0)
    diluted = pd.concat([floor, chance.assign(cell=chance["cell"] + 12),
                         informative.assign(cell=informative["cell"] + 24)])
    outcome = evaluate(TRACKS, diluted)           # over all 36 cells the mean gap is 1.6
    assert outcome.verdict is Verdict.FAILS
    assert "over 12 informative cells; 24 saturated cells apart" in outcome.observed
    few = pd.concat([floor, informative[informative["cell"] < 6].assign(
        cell=lambda f: f["cell"] + 12)])
    outcome = evaluate(TRACKS, few)
    assert outcome.verdict is Verdict.INCONCLUSIVE and "MIN_UNITS" in outcome.observed


def face_trials(kssc_minus_ssc):
    """Three methods on paired draws; kSSC = SSC + the given differences."""
    ssc = np.resize([20.0, 30.0, 10.0, 25.0, 15.0, 22.0], len(kssc_minus_ssc))
    rows = []
    for trial, (s, d) in enumerate(zip(ssc, kssc_minus_ssc, strict=True)):
        for method, error in (("ssc", s), ("kssc", s + d), ("gsc", 60.0)):
            rows.append({"variant": "faithful", "method": method, "trial": trial,
                         "seed": 100 + trial, "error_pct": error})
    trials = pd.DataFrame(rows)
    table = (trials.groupby(["variant", "method"], sort=False)["error_pct"].mean()
             .rename("error_pct_mean").reset_index())
    return table, trials


@pytest.mark.parametrize("differences, verdict", [
    ([-2.0, -3.0, -1.5, -2.5, -2.0, -1.0] * 2, Verdict.HOLDS),
    ([2.0, 3.0, 1.5, 2.5, 2.0, 1.0] * 2, Verdict.FAILS),
    ([-6.0, 5.0, -4.0, 4.5, -5.0, 3.0] * 2, Verdict.INCONCLUSIVE),   # lower on average, noisy
    ([2.0, 3.0, 1.5, 2.5, 2.0, 1.0], Verdict.INCONCLUSIVE),          # 6 draws < MIN_UNITS
])
def test_lowest_is_a_paired_comparison(differences, verdict):
    table, trials = face_trials(differences)
    claim = {"rule": "lowest", "params": {"where": {"variant": "faithful"}, "method": "kssc"}}
    assert evaluate(claim, table, trials=trials).verdict is verdict


def test_no_bootstrapped_verdict_below_the_minimum_of_units():
    clear = {"mean": 5.0, "low": 4.0, "high": 6.0}
    assert decide_units({**clear, "n": MIN_UNITS}, 2.0) is Verdict.FAILS
    assert decide_units({**clear, "n": MIN_UNITS - 1}, 2.0) is Verdict.INCONCLUSIVE


def sequences(first, last):
    """kSSC's error per sequence at the first and the last noise level."""
    rows = [{"method": "kssc", "noise": level, "sequence": f"s{i}", "seed": 10 * i + j,
             "error_pct": error}
            for i, pair in enumerate(zip(first, last, strict=True))
            for j, (level, error) in enumerate(zip((0.0, 0.4), pair, strict=True))]
    trials = pd.DataFrame(rows)
    table = (trials.groupby(["noise", "method"])["error_pct"].mean().rename("error_pct_mean")
             .reset_index())
    return table, trials


RISE = {"rule": "rise_at_most",
        "params": {"cell": "noise", "method": "kssc", "threshold": 10.0, "pair_on": "sequence"}}


def test_rise_is_paired_per_sequence():
    # Sequences from 0 % to 60 % error, each rising by 5-7 points: unpaired, the spread
    # between sequences would swamp the rise; paired, it is 6 +- 1.
    first = np.linspace(0.0, 60.0, 12)
    table, trials = sequences(first, first + np.resize([5.0, 7.0, 6.0], 12))
    outcome = evaluate(RISE, table, trials=trials)
    assert outcome.verdict is Verdict.HOLDS and "paired over 12 sequences +6.0" in outcome.observed
    table, trials = sequences(first, first + np.resize([14.0, 16.0, 15.0], 12))
    assert evaluate(RISE, table, trials=trials).verdict is Verdict.FAILS
    table, trials = sequences(first[:5], first[:5] + 6.0)
    assert evaluate(RISE, table, trials=trials).verdict is Verdict.INCONCLUSIVE


def test_at_most_reads_the_tables_interval():
    claim = {"rule": "at_most", "params": {"where": {"method": "kssc"},
                                           "value": "error_pct_mean", "threshold": 2.18}}
    row = {"method": "kssc", "n_trials": 30, "n_failed": 0, "error_pct_mean": 2.06}
    inconclusive = pd.DataFrame([{**row, "error_pct_ci_low": 1.09, "error_pct_ci_high": 3.21}])
    fails = pd.DataFrame([{**row, "error_pct_mean": 3.0, "error_pct_ci_low": 2.5,
                           "error_pct_ci_high": 3.5}])
    assert evaluate(claim, inconclusive).verdict is Verdict.INCONCLUSIVE
    assert evaluate(claim, fails).verdict is Verdict.FAILS
    # Two combinations (yale_grouped at 10 subjects): a bootstrap on n = 2 is [min, max].
    two = pd.DataFrame([{**row, "n_trials": 2, "error_pct_ci_low": 1.0, "error_pct_ci_high": 1.5}])
    outcome = evaluate(claim, two)
    assert outcome.verdict is Verdict.INCONCLUSIVE and "only 2 independent" in outcome.observed


def digits_trials(kssc, ssc):
    rows = [{"method": m, "trial": t, "seed": t, "accuracy_pct": a}
            for t, pair in enumerate(zip(kssc, ssc, strict=True))
            for m, a in zip(("kssc", "ssc"), pair, strict=True)]
    trials = pd.DataFrame(rows)
    return (trials.groupby("method")["accuracy_pct"].mean().rename("accuracy_pct_mean")
            .reset_index(), trials)


GAP = {"rule": "gap_at_most", "params": {"method": "kssc", "reference": "ssc", "same_data": True,
                                         "value": "accuracy_pct_mean", "threshold": 5.0}}


def test_identical_trials_of_the_same_data_are_one_unit():
    table, trials = digits_trials([70.0] * 3, [79.0] * 3)       # gap 9 > 5, but one unit
    outcome = evaluate(GAP, table, trials=trials)
    assert outcome.verdict is Verdict.INCONCLUSIVE and "only 1 independent" in outcome.observed
    table, trials = digits_trials(70.0 + np.arange(12.0), 79.0 + np.arange(12.0) + 0.1 *
                                  np.resize([1.0, -1.0, 0.0], 12))
    assert evaluate(GAP, table, trials=trials).verdict is Verdict.FAILS


def test_time_trend_on_two_core_counts_is_inconclusive():
    table = pd.DataFrame({"cores": [1, 2, 1, 2], "method": ["kssc_a", "kssc_a", "ssc", "ssc"],
                          "time_paper_s_median": [2.0, 1.0, 1.0, 1.5]})
    claim = {"rule": "time_trend", "params": {"x": "cores", "method_prefix": "kssc",
                                              "direction": "down"}}
    outcome = evaluate(claim, table)
    assert outcome.verdict is Verdict.INCONCLUSIVE and "only 2 values of cores" in outcome.observed
    four = pd.DataFrame({"cores": [1, 2, 3, 4], "method": ["kssc_a"] * 4,
                         "time_paper_s_median": [2.0, 1.0, 0.9, 2.5]})
    assert evaluate(claim, four).verdict is Verdict.FAILS
    noise = four.assign(time_paper_s_median=[0.011, 0.010, 0.010, 0.012])
    assert evaluate(claim, noise).verdict is Verdict.INCONCLUSIVE


def sizes(relaxed, exact):
    return pd.DataFrame([{"n_samples": 100 * (i + 1), "method": m, "time_paper_s_median": t}
                         for i, pair in enumerate(zip(relaxed, exact, strict=True))
                         for m, t in zip(("kssc_relaxed", "kssc_exact"), pair, strict=True)])


def test_timing_differences_within_the_floor_decide_nothing():
    claim = {"rule": "faster_at_share_of_sizes",
             "params": {"x": "n_samples", "method": "kssc_relaxed", "reference": "kssc_exact",
                        "share": 0.5}}
    # runtime_n: 0.011 s against 0.012 s is timer noise, not "slower".
    assert time_order(0.012, 0.011) == 0 and time_order(1.2, 1.0) == 1
    noise = sizes([0.012, 0.032, 0.012, 0.037], [0.011, 0.011, 0.011, 0.037])
    assert evaluate(claim, noise).verdict is Verdict.INCONCLUSIVE
    slower = sizes([0.5, 0.8, 1.2, 1.5], [0.2, 0.3, 0.4, 1.5])
    assert evaluate(claim, slower).verdict is Verdict.FAILS
    faster = sizes([0.2, 0.3, 0.4, 1.5], [0.5, 0.8, 1.2, 1.5])
    assert evaluate(claim, faster).verdict is Verdict.HOLDS


def test_a_time_ratio_within_the_floor_decides_nothing():
    claim = {"rule": "slowest_share_of_fastest",
             "params": {"x": "n_samples", "method_prefix": "kssc", "reference_prefix": "ssc",
                        "share": 0.1}}
    table = pd.DataFrame({"n_samples": [1000, 1000], "method": ["kssc_a", "ssc_a"],
                          "time_paper_s_median": [0.5, 2.0]})
    assert evaluate(claim, table).verdict is Verdict.FAILS          # 25 % of SSC's time
    tiny = table.assign(time_paper_s_median=[0.004, 0.02])           # 20 %, but 16 ms apart
    assert evaluate(claim, tiny).verdict is Verdict.INCONCLUSIVE


def observation(spectra, fp_pct):
    """Singular value rows (one group per spectrum, energy_total = sum of squares) and
    neighbour rows of one group, fp_pct[k - 1] % false neighbours at k."""
    rows = []
    for g, values in enumerate(spectra):
        energy = float(np.sum(np.square(values)))
        rows += [{"panel": "singular_values", "group": f"g{g:02d}", "index": i + 1,
                  "singular_value": v, "energy_total": energy} for i, v in enumerate(values)]
    rows += [{"panel": "neighbours", "group": "all", "n_neighbors": k + 1, "fp_pct": fp,
              "tp_pct": 100.0 - fp, "tp_per_point": (k + 1) * (1 - fp / 100)}
             for k, fp in enumerate(fp_pct)]
    return pd.DataFrame(rows)


# Spectra whose first value is the offset: 1 + 3 more directions, and 1 + 1.
FOUR_DIM = [[30, 10, 9, 8, 0.1, 0.1], [30, 10, 9.5, 8, 0.2, 0.1], [30, 9, 9, 9, 0.1, 0.0]] * 4
TWO_DIM = [[30, 5, 0.1, 0.1, 0.1, 0.1], [30, 4, 0.2, 0.1, 0.1, 0.1], [30, 6, 0.1, 0.1, 0, 0]] * 4


def observed(claim, frame):
    """The claim's outcome as the report gets it: the observation summary table (the
    estimated dimensions) with the trial rows."""
    return evaluate(claim, summarise_dims(frame), trials=frame)


def test_summary_estimates_each_groups_dimension_beyond_its_offset():
    # FOUR_DIM[0]: squares 900 | 100, 81, 64, 0.01, 0.01: 95 % of the 245.02 beyond the first
    # (232.8) is first reached by the next 3 (245): d = 4; TWO_DIM[0]: 25 of 25.04: d = 2.
    table = summarise_dims(observation([FOUR_DIM[0], TWO_DIM[0]], [1]))
    assert table.to_dict("list") == {"group": ["g00", "g01"], "estimated_dim_95": [4, 2],
                                     "estimated_dim_99": [4, 2]}


def test_dimension_of_non_negative_data_is_not_its_offset():
    # Non-negative points in 6-dimensional linear subspaces: the share of all the energy
    # reads them as 1-dimensional (the mean direction holds > 95 %); the estimate reads 6,
    # the rank of the data.
    rng = np.random.default_rng(0)
    rows = []
    for g in range(3):
        X = rng.uniform(size=(60, 6)) @ rng.uniform(size=(6, 100))
        X += 1e-3 * rng.standard_normal(X.shape)
        rows += singular_value_rows(X, f"g{g}", 20)
        s2 = np.linalg.svd(X, compute_uv=False) ** 2
        assert s2[0] >= 0.95 * s2.sum() and np.linalg.matrix_rank(X, tol=0.1) == 6
    assert summarise_dims(pd.DataFrame(rows))["estimated_dim_95"].tolist() == [6, 6, 6]


def test_estimated_dimension_can_fail():
    claim = {"rule": "subspace_dim_near", "params": {"subspace_dim": 4, "tolerance": 1}}
    assert observed(claim, observation(FOUR_DIM, [1])).verdict is Verdict.HOLDS
    outcome = observed(claim, observation(TWO_DIM, [1]))
    assert outcome.verdict is Verdict.FAILS and "mean 2.0" in outcome.observed
    mixed = observation([FOUR_DIM[0], TWO_DIM[0]] * 6, [1])       # d = 4 and d = 2
    assert observed(claim, mixed).verdict is Verdict.INCONCLUSIVE
    few = observed(claim, observation(TWO_DIM[:5], [1]))          # five faces
    assert few.verdict is Verdict.INCONCLUSIVE and "only 5 independent groups" in few.observed


SUFFICIENT = {"rule": "sufficient_neighbours_beyond_dim",
              "params": {"subspace_dim": 9, "aggregate": "mean", "min_fp_pct": 5}}


def test_sufficient_neighbours_need_a_margin_beyond_the_dimension():
    noisy = [2.0, 4.0, 6.0, 8.0, 10.0, 12.0]                    # 8 % false at k = 4
    assert observed(SUFFICIENT, observation(FOUR_DIM, noisy)).verdict is Verdict.HOLDS
    # Hopkins-like: 0.3 % false neighbours. The first sufficient k (5) still exceeds d = 4,
    # which made the old rule hold on any data not perfectly separated; k = d nearly suffices.
    clean = [0.3] * 6
    outcome = observed(SUFFICIENT, observation(FOUR_DIM, clean))
    assert outcome.verdict is Verdict.FAILS
    assert "for d = 4: FP 0.3 % at k = d, first sufficient k = 5" in outcome.observed
    six_dim = [30, 10, 9, 8, 7, 6]                                 # d = 2 or 6: d in 3..5
    mixed = observation([six_dim, TWO_DIM[0]] * 6, [0.0, 1.0, 6.0, 8.0, 3.0, 10.0])
    outcome = observed(SUFFICIENT, mixed)                          # d = 3, 4 hold, 5 fails
    assert outcome.verdict is Verdict.INCONCLUSIVE and "for d = 5: FP 3.0 %" in outcome.observed
    assert observed(SUFFICIENT, observation(FOUR_DIM[:5], noisy)).verdict is \
        Verdict.INCONCLUSIVE                                          # 5 groups < MIN_UNITS


# Every rule of the registry on hand-made tables: a case where it must hold and one where it
# must fail (a rule that only measures: two cases with different measurements). A rule
# replaced by one that always holds, or never does, fails one of its cases; the last two
# tests check both, for every rule.

def paired_trials(offsets, levels=(0.0, 0.1), n=12, jitter=0.5):
    """Trials of several methods on the same data at each noise level: method m's error is the
    draw's base error + offsets[m] (a number, or {level: number}) + a small paired jitter."""
    base = np.resize([20.0, 30.0, 10.0, 25.0, 15.0, 22.0], n)
    wobble = jitter * np.resize([1.0, -1.0, 0.0], n)
    rows = []
    for level in levels:
        for trial in range(n):
            for method, offset in offsets.items():
                shift = offset.get(level, 0.0) if isinstance(offset, dict) else offset
                rows.append({"noise": level, "method": method, "trial": trial,
                             "seed": 1000 * trial + int(100 * level),
                             "error_pct": base[trial] + shift + (wobble[trial] if shift else 0.0)})
    trials = pd.DataFrame(rows)
    table = (trials.groupby(["noise", "method"], sort=False)["error_pct"].mean()
             .rename("error_pct_mean").reset_index())
    return table, trials


def spreads(first, last):
    """Mean errors over four (mean, var) cells at two noise levels: SSC's and kSSC's."""
    rows = [{"noise": level, "mean": cell // 2, "var": cell % 2, "method": method,
             "error_pct_mean": 10.0 + spread * cell + (1.0 if method == "kssc" else 0.0)}
            for level, spread in ((0.0, first), (0.1, last)) for cell in range(4)
            for method in ("ssc", "kssc")]
    return pd.DataFrame(rows)


def times(x, rows):
    """A summary table of median times: rows = {method: [time at each x, NaN: not run]}."""
    return pd.DataFrame([{"n_per_subspace": n, "n_samples": n, "cores": n, "method": method,
                          "time_paper_s_median": t}
                         for method, ts in rows.items() for n, t in zip(x, ts, strict=True)
                         if not np.isnan(t)])


def raw_times(kssc, ssc):
    return pd.DataFrame([{"method": m, "time_representation_s": t, "time_fit_s": t + 0.01}
                         for m, ts in (("kssc", kssc), ("ssc", ssc)) for t in ts])


def scaling(power):
    sizes_ = [1000, 2000, 4000, 8000]
    return pd.DataFrame([{"method": "kssc", "n_samples": n, "n_trials": 1, "n_failed": 0,
                          "time_fit_s_median": 1e-3 * (n / 1000) ** power} for n in sizes_])


def requirements(share):
    """kSSC's memory and FLOPs as `share` of SSC's at k = 1000 (1 % at k = 100)."""
    rows = []
    for variant in ("exact", "relaxed"):
        rows.append({"method": f"ssc_{variant}", "n_samples": 100000, "memory_gb_k100": 100.0,
                     "memory_gb_k1000": 100.0, "flops_k100": 1e13, "flops_k1000": 1e13})
        rows.append({"method": f"kssc_{variant}", "n_samples": 100000, "memory_gb_k100": 1.0,
                     "memory_gb_k1000": 100.0 * share, "flops_k100": 1e11,
                     "flops_k1000": 1e13 * share})
    return pd.DataFrame(rows)


def observation_case(spectra, fp_pct):
    frame = observation(spectra, fp_pct)
    return summarise_dims(frame), frame


def at_most_row(mean, low, high):
    return pd.DataFrame([{"method": "kssc", "n_trials": 30, "n_failed": 0, "error_pct_mean": mean,
                          "error_pct_ci_low": low, "error_pct_ci_high": high}])


def case(params, data, verdict, observed=""):
    """(params, table, trials, expected verdict, a text the observation must hold)."""
    table, trials = data if isinstance(data, tuple) else (data, None)
    return params, table, trials, verdict, observed


COMPETITORS = {"cells": ["noise"], "competitors": ["gsc", "tsc"]}
PER_LEVEL = {"cells": ["noise"], "band": [-2.0, 2.0]}
WITHIN = {"method": "kssc", "others": ["tsc", "sssc"], "factor": 3.0}
BELOW = {"method": "kssc", "others": ["ssc", "gsc"], "share": 0.2}
SHARE = {"x": "n_samples", "method_prefix": "kssc", "reference_prefix": "ssc", "share": 0.1}
FASTER = {"x": "n_samples", "method": "kssc_relaxed", "reference": "kssc_exact", "share": 0.5}
DOWN = {"x": "cores", "method_prefix": "kssc", "direction": "down"}
FACES = {"where": {"variant": "faithful"}, "method": "kssc"}
AT_MOST = {"where": {"method": "kssc"}, "value": "error_pct_mean", "threshold": 2.18}
RISE_PARAMS = RISE["params"]
LINEAR = np.linspace(0.0, 60.0, 12)

CASES = {
    "tracks": [case(TRACKS["params"], tracks_table([0.5, -1.0, 0.8, 0.2, 1.0, -0.5] * 2),
                    Verdict.HOLDS),
               case(TRACKS["params"], tracks_table([9.0, -8.0, 10.0, 7.5, 12.0, 9.5] * 2),
                    Verdict.FAILS)],
    "tracks_per_level": [
        case(PER_LEVEL, paired_trials({"ssc": 0.0, "kssc": 0.3}), Verdict.HOLDS,
             "0.1: +0.30 [+0."),
        case(PER_LEVEL, paired_trials({"ssc": 0.0, "kssc": {0.1: 5.0}}), Verdict.FAILS,
             "wholly outside at 1"),
        case(PER_LEVEL, paired_trials({"ssc": 0.0, "kssc": {0.1: 2.0}}), Verdict.INCONCLUSIVE),
        case(PER_LEVEL, paired_trials({"ssc": 0.0, "kssc": {0.1: 5.0}}, n=6),
             Verdict.INCONCLUSIVE, "fewer than MIN_UNITS = 10 seeds at 2")],
    "below_competitors": [
        case(COMPETITORS, paired_trials({"kssc": 0.0, "gsc": 5.0, "tsc": 3.0}), Verdict.HOLDS),
        case(COMPETITORS, paired_trials({"kssc": 0.0, "gsc": 5.0, "tsc": {0.0: 3.0, 0.1: -3.0}}),
             Verdict.FAILS, "higher with it below 0 in 1"),
        case(COMPETITORS, paired_trials({"kssc": 0.0, "gsc": 5.0, "tsc": 3.0})[0],
             Verdict.HOLDS, "at 2/2 levels"),
        case(COMPETITORS, paired_trials({"kssc": 0.0, "gsc": 5.0, "tsc": {0.0: 3.0, 0.1: -3.0}})[0],
             Verdict.FAILS, "at 1/2 levels")],
    "rise_at_most": [
        case(RISE_PARAMS, sequences(LINEAR, LINEAR + np.resize([5.0, 7.0, 6.0], 12)),
             Verdict.HOLDS),
        case(RISE_PARAMS, sequences(LINEAR, LINEAR + np.resize([14.0, 16.0, 15.0], 12)),
             Verdict.FAILS)],
    "spread_grows": [case({"level": "noise", "cells": ["mean", "var"]}, spreads(1.0, 4.0),
                          Verdict.HOLDS, "SSC 1.3, 5.2"),
                     case({"level": "noise", "cells": ["mean", "var"]}, spreads(4.0, 1.0),
                          Verdict.FAILS)],
    "lowest": [case(FACES, face_trials([-2.0, -3.0, -1.5, -2.5, -2.0, -1.0] * 2), Verdict.HOLDS),
               case(FACES, face_trials([2.0, 3.0, 1.5, 2.5, 2.0, 1.0] * 2), Verdict.FAILS)],
    "at_most": [case(AT_MOST, at_most_row(1.5, 1.0, 2.0), Verdict.HOLDS, "1.50"),
                case(AT_MOST, at_most_row(3.0, 2.5, 3.5), Verdict.FAILS, "3.00")],
    "gap_at_most": [
        case(GAP["params"], digits_trials(70.0 + np.arange(12.0), 72.0 + np.arange(12.0)
                                          + np.resize([0.5, -0.5, 0.0], 12)), Verdict.HOLDS),
        case(GAP["params"], digits_trials(70.0 + np.arange(12.0), 79.0 + np.arange(12.0)
                                          + np.resize([0.5, -0.5, 0.0], 12)), Verdict.FAILS)],
    "time_ratio": [case({"method": "kssc", "reference": "ssc"},
                        raw_times([0.1, 0.1, 0.2], [1.0, 1.0, 2.0]), Verdict.INFO, "ratio 0.10"),
                   case({"method": "kssc", "reference": "ssc"},
                        raw_times([0.5, 0.5, 1.0], [1.0, 1.0, 2.0]), Verdict.INFO, "ratio 0.50")],
    "time_within_factor_at_largest": [
        case(WITHIN, times([100, 200], {"kssc": [0.2, 1.0], "tsc": [0.1, 0.6], "sssc": [0.5, 2.0]}),
             Verdict.HOLDS, "kSSC/TSC = 1.67"),
        case(WITHIN, times([100, 200], {"kssc": [0.2, 1.0], "tsc": [0.1, 0.2], "sssc": [0.5, 2.0]}),
             Verdict.FAILS, "kSSC/TSC = 5.00")],
    "time_below_share_at_largest": [
        case(BELOW, times([100, 200], {"kssc": [0.1, 0.5], "ssc": [2.0, np.nan],
                                       "gsc": [1.0, 5.0]}), Verdict.HOLDS, "ratio 0.050"),
        case(BELOW, times([100, 200], {"kssc": [0.1, 0.5], "ssc": [2.0, np.nan],
                                       "gsc": [1.0, 1.0]}), Verdict.FAILS, "ratio 0.500")],
    "slowest_share_of_fastest": [
        case(SHARE, times([1000], {"kssc_a": [0.1], "ssc_a": [2.0]}), Verdict.HOLDS),
        case(SHARE, times([1000], {"kssc_a": [0.5], "ssc_a": [2.0]}), Verdict.FAILS)],
    "faster_at_share_of_sizes": [
        case(FASTER, sizes([0.2, 0.3, 0.4, 1.5], [0.5, 0.8, 1.2, 1.5]), Verdict.HOLDS),
        case(FASTER, sizes([0.5, 0.8, 1.2, 1.5], [0.2, 0.3, 0.4, 1.5]), Verdict.FAILS)],
    "time_trend": [
        case(DOWN, times([1, 2, 3, 4], {"kssc_a": [2.0, 1.5, 1.0, 0.8]}), Verdict.HOLDS),
        case(DOWN, times([1, 2, 3, 4], {"kssc_a": [2.0, 1.0, 0.9, 2.5]}), Verdict.FAILS)],
    "loglog_slope": [case({"x": "n_samples", "y": "time_fit_s_median"}, scaling(1.0),
                          Verdict.INFO, "log-log slope 1.00"),
                     case({"x": "n_samples", "y": "time_fit_s_median"}, scaling(2.0),
                          Verdict.INFO, "log-log slope 2.00")],
    "kssc_share_of_ssc": [case({"threshold": 0.02}, requirements(0.01), Verdict.HOLDS,
                               "memory 1.00%"),
                          case({"threshold": 0.02}, requirements(0.05), Verdict.FAILS,
                               "memory 5.00%")],
    "subspace_dim_near": [
        case({"subspace_dim": 4, "tolerance": 1}, observation_case(FOUR_DIM, [1]), Verdict.HOLDS),
        case({"subspace_dim": 4, "tolerance": 1}, observation_case(TWO_DIM, [1]), Verdict.FAILS)],
    "sufficient_neighbours_beyond_dim": [
        case(SUFFICIENT["params"], observation_case(FOUR_DIM, [2.0, 4.0, 6.0, 8.0, 10.0, 12.0]),
             Verdict.HOLDS),
        case(SUFFICIENT["params"], observation_case(FOUR_DIM, [0.3] * 6), Verdict.FAILS)],
}


def check(rule, params, table, trials, verdict, observed):
    outcome = evaluate({"rule": rule, "params": params}, table, trials=trials)
    assert outcome.verdict is verdict, outcome
    assert observed in outcome.observed, outcome.observed


def test_every_rule_has_a_case_where_it_holds_and_one_where_it_fails():
    assert set(CASES) == set(claims.RULES)
    for rule, cases in CASES.items():
        verdicts = [c[3] for c in cases]
        if Verdict.INFO in verdicts:  # a measurement: two cases that measure differently
            assert len({c[4] for c in cases}) >= 2 and all(c[4] for c in cases), rule
        else:
            assert {Verdict.HOLDS, Verdict.FAILS} <= set(verdicts), rule


@pytest.mark.parametrize("rule, index", [(r, i) for r, cases in CASES.items()
                                         for i in range(len(cases))])
def test_each_rule_on_its_cases(rule, index):
    check(rule, *CASES[rule][index])


@pytest.mark.parametrize("mutant", [Verdict.HOLDS, Verdict.FAILS])
@pytest.mark.parametrize("rule", sorted(claims.RULES))
def test_a_rule_that_always_holds_or_never_holds_fails_a_case(rule, mutant, monkeypatch):
    monkeypatch.setitem(claims.RULES, rule, lambda table, **params: claims.Outcome(mutant, ""))
    failed = 0
    for params, table, trials, verdict, observed in CASES[rule]:
        try:
            check(rule, params, table, trials, verdict, observed)
        except AssertionError:
            failed += 1
    assert failed, f"{rule} replaced by a rule that always returns {mutant} passes its cases"


def test_trials_of_a_sequence_are_one_unit():
    # Five sequences, three draws each, kSSC 5 points worse at noise 0.1: fifteen seeds but
    # only five sequences, too few to decide when the unit is the sequence.
    table, trials = paired_trials({"ssc": 0.0, "kssc": {0.1: 5.0}}, n=15)
    trials["sequence"] = "s" + (trials["trial"] % 5).astype(str)
    by_seed = evaluate({"rule": "tracks_per_level", "params": PER_LEVEL}, table, trials=trials)
    assert by_seed.verdict is Verdict.FAILS
    by_sequence = evaluate({"rule": "tracks_per_level",
                            "params": {**PER_LEVEL, "unit": "sequence"}}, table, trials=trials)
    assert by_sequence.verdict is Verdict.INCONCLUSIVE and "(n = 5)" in by_sequence.observed
    claim = {"rule": "below_competitors", "params": {**COMPETITORS, "unit": "sequence"}}
    table, trials = paired_trials({"kssc": 0.0, "gsc": 5.0, "tsc": 3.0}, n=15)
    trials["sequence"] = "s" + (trials["trial"] % 5).astype(str)
    outcome = evaluate(claim, table, trials=trials)
    assert outcome.verdict is Verdict.INCONCLUSIVE and "over sequences" in outcome.rule
