"""Verdicts with uncertainty (experiments/claims.py) on hand-made CSV rows: each rule can
hold, fail and be inconclusive."""

import numpy as np
import pandas as pd
import pytest

from experiments._observation import summarise_dims
from experiments.claims import Verdict, decide, decide_within, evaluate


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


def tracks_table(gaps):
    rows = []
    for cell, gap in enumerate(gaps):
        rows += [{"cell": cell, "method": "ssc", "error_pct_mean": 10.0},
                 {"cell": cell, "method": "kssc", "error_pct_mean": 10.0 + gap}]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("gaps, verdict", [
    ([0.5, -1.0, 0.8, 0.2, 1.0, -0.5], Verdict.HOLDS),
    ([9.0, -8.0, 10.0, 7.5, 12.0, 9.5], Verdict.FAILS),
    ([0.0, 0.5, 6.0, 0.2, 4.0, 0.1], Verdict.INCONCLUSIVE),   # mean 1.8, interval over 2
])
def test_tracks_bootstraps_over_cells(gaps, verdict):
    claim = {"rule": "tracks", "params": {"cells": ["cell"], "threshold": 2.0}}
    assert evaluate(claim, tracks_table(gaps)).verdict is verdict


def face_trials(kssc_minus_ssc):
    """Three methods on 6 paired draws; kSSC = SSC + the given differences."""
    ssc = np.array([20.0, 30.0, 10.0, 25.0, 15.0, 22.0])
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
    ([-2.0, -3.0, -1.5, -2.5, -2.0, -1.0], Verdict.HOLDS),
    ([2.0, 3.0, 1.5, 2.5, 2.0, 1.0], Verdict.FAILS),
    ([-6.0, 5.0, -4.0, 4.5, -5.0, 3.0], Verdict.INCONCLUSIVE),   # lower on average, noisy
])
def test_lowest_is_a_paired_comparison(differences, verdict):
    table, trials = face_trials(differences)
    claim = {"rule": "lowest", "params": {"where": {"variant": "faithful"}, "method": "kssc"}}
    assert evaluate(claim, table, trials=trials).verdict is verdict


def test_at_most_reads_the_tables_interval():
    claim = {"rule": "at_most", "params": {"where": {"method": "kssc"},
                                           "value": "error_pct_mean", "threshold": 2.18}}
    row = {"method": "kssc", "error_pct_mean": 2.06}
    inconclusive = pd.DataFrame([{**row, "error_pct_ci_low": 1.09, "error_pct_ci_high": 3.21}])
    fails = pd.DataFrame([{**row, "error_pct_mean": 3.0, "error_pct_ci_low": 2.5,
                           "error_pct_ci_high": 3.5}])
    assert evaluate(claim, inconclusive).verdict is Verdict.INCONCLUSIVE
    assert evaluate(claim, fails).verdict is Verdict.FAILS


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


def observation(spectra, tp_per_point):
    """Singular value rows (one group per spectrum, energy_total = sum of squares) and
    neighbour rows of one group, tp_per_point[k - 1] at k."""
    rows = []
    for g, values in enumerate(spectra):
        energy = float(np.sum(np.square(values)))
        rows += [{"panel": "singular_values", "group": f"g{g}", "index": i + 1,
                  "singular_value": v, "energy_total": energy} for i, v in enumerate(values)]
    rows += [{"panel": "neighbours", "group": "all", "n_neighbors": k + 1, "tp_pct": 100.0,
              "tp_per_point": tp} for k, tp in enumerate(tp_per_point)]
    return pd.DataFrame(rows)


FOUR_DIM = [[10, 9, 8, 7, 0.1, 0.1], [10, 9.5, 8, 6, 0.2, 0.1], [9, 9, 9, 9, 0.1, 0.0]]
TWO_DIM = [[10, 5, 0.1, 0.1, 0.1, 0.1], [10, 4, 0.2, 0.1, 0.1, 0.1], [9, 6, 0.1, 0.1, 0.0, 0.0]]


def observed(claim, frame):
    """The claim's outcome as the report gets it: the observation summary table (the
    estimated dimensions) with the trial rows."""
    return evaluate(claim, summarise_dims(frame), trials=frame)


def test_summary_estimates_each_groups_dimension_from_its_energy():
    # FOUR_DIM[0]: squares 100, 81, 64, 49, 0.01, 0.01 (sum 294.02); 95 % = 279.3 is first
    # reached by the first 4 (294), 99 % (291.1) too; TWO_DIM[0]: 100 + 25 = 125 of 125.04.
    table = summarise_dims(observation([FOUR_DIM[0], TWO_DIM[0]], [1]))
    assert table.to_dict("list") == {"group": ["g0", "g1"], "estimated_dim_95": [4, 2],
                                     "estimated_dim_99": [4, 2]}


def test_estimated_dimension_can_fail():
    claim = {"rule": "subspace_dim_near", "params": {"subspace_dim": 4, "tolerance": 1}}
    assert observed(claim, observation(FOUR_DIM, [1])).verdict is Verdict.HOLDS
    outcome = observed(claim, observation(TWO_DIM, [1]))
    assert outcome.verdict is Verdict.FAILS and "mean 2.0" in outcome.observed
    mixed = observation([FOUR_DIM[0], TWO_DIM[0]], [1])          # d = 4 and d = 2
    assert observed(claim, mixed).verdict is Verdict.INCONCLUSIVE


def test_sufficient_neighbours_tested_against_the_estimated_dimension():
    claim = {"rule": "sufficient_neighbours_beyond_dim",
             "params": {"subspace_dim": 9, "aggregate": "mean"}}
    perfect = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]                    # all neighbours true
    imperfect = [0.9, 1.8, 2.7, 3.6, 4.5, 5.4]
    assert observed(claim, observation(FOUR_DIM, imperfect)).verdict is Verdict.HOLDS
    outcome = observed(claim, observation(FOUR_DIM, perfect))
    assert outcome.verdict is Verdict.FAILS and "for d = 4: first sufficient k = 4" in \
        outcome.observed
    mixed = observation([FOUR_DIM[0], TWO_DIM[0]], [1.0, 2.0, 2.5, 3.5, 5.0, 6.0])
    assert observed(claim, mixed).verdict is Verdict.INCONCLUSIVE   # d = 2 fails, d = 3, 4 hold
