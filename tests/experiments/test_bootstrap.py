"""The bootstrap intervals of experiments/_bootstrap.py against hand-checked cases."""

import numpy as np
import pandas as pd
import pytest

from experiments._bootstrap import (
    bootstrap_difference,
    bootstrap_mean,
    bootstrap_paired_difference,
    interval_columns,
    paired_reference,
)


def test_constant_sample_gives_zero_width():
    out = bootstrap_mean([2.5] * 7)
    assert out["low"] == out["high"] == 2.5
    assert out["n"] == 7


def test_two_values_bounds_are_the_values():
    # Every resampled mean of {0, 10} is 0, 5 or 10; with 4000 resamples the 2.5 % and
    # 97.5 % quantiles are the extremes (each has probability 1/4).
    out = bootstrap_mean([0.0, 10.0])
    assert (out["mean"], out["low"], out["high"]) == (5.0, 0.0, 10.0)


def test_single_value_and_nan_give_no_interval():
    out = bootstrap_mean([np.nan, 3.0])
    assert out["mean"] == 3.0 and out["n"] == 1
    assert np.isnan(out["low"]) and np.isnan(out["high"])
    assert np.isnan(bootstrap_mean([])["mean"])


def test_deterministic():
    values = np.random.default_rng(3).normal(size=40)
    assert bootstrap_mean(values) == bootstrap_mean(values)
    assert bootstrap_mean(values, seed=1) != bootstrap_mean(values, seed=2)


def test_normal_coverage_near_nominal():
    rng = np.random.default_rng(0)
    hits = 0
    repeats = 300
    for i in range(repeats):
        out = bootstrap_mean(rng.normal(1.0, 2.0, size=30), n_resamples=1000, seed=i)
        hits += out["low"] <= 1.0 <= out["high"]
    # The percentile interval under-covers slightly at n = 30 (about 93 to 94 %).
    assert 0.88 <= hits / repeats <= 0.98


def test_interval_width_matches_normal_theory():
    values = np.random.default_rng(1).normal(0.0, 1.0, size=400)
    out = bootstrap_mean(values)
    half = 1.96 * values.std(ddof=1) / np.sqrt(len(values))
    assert (out["high"] - out["low"]) / 2 == pytest.approx(half, rel=0.1)


def test_paired_difference_removes_the_shared_part():
    shared = np.random.default_rng(2).normal(0, 10, size=50)
    out = bootstrap_paired_difference(shared + 1.0, shared)
    assert out["low"] == out["high"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="same shape"):
        bootstrap_paired_difference([1, 2], [1])


def test_independent_difference():
    out = bootstrap_difference([5.0, 5.0, 5.0], [1.0, 1.0])
    assert (out["mean"], out["low"], out["high"]) == (4.0, 4.0, 4.0)


def test_paired_reference():
    assert paired_reference("kssc") == "ssc"
    assert paired_reference("kssc_tuned") == "ssc_tuned"
    assert paired_reference("gsc") == "ssc"
    assert paired_reference("ssc_exact") is None


def test_interval_columns_pairs_on_trials():
    frame = pd.DataFrame({
        "cell": [1] * 6, "method": ["ssc"] * 3 + ["kssc"] * 3, "trial": [0, 1, 2] * 2,
        "error_pct": [10.0, 20.0, 30.0, 12.0, 22.0, 32.0]})
    out = interval_columns(frame, ["cell", "method"])
    kssc = out.loc[(1, "kssc")]
    assert kssc["paired_with"] == "ssc"
    assert kssc["error_pct_vs_ssc_low"] == kssc["error_pct_vs_ssc_high"] == pytest.approx(2.0)
    assert out.loc[(1, "ssc"), "paired_with"] == ""
    assert 12.0 <= kssc["error_pct_ci_low"] < kssc["error_pct_ci_high"] <= 32.0
