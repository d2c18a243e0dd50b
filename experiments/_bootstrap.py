"""95 % percentile-bootstrap intervals of a mean and of a paired difference of means.

The resampling unit is whatever one value stands for (a trial, a draw, a grid cell, a
sequence): the caller passes one value per unit, already averaged within the unit. The
intervals are `scipy.stats.bootstrap`'s percentile intervals from a generator seeded with
`SEED`, so the same values give the same interval on every run and machine. NaN values
(failed runs) are left out; a pair is left out when either side is NaN. Fewer than two
values give no interval (NaN bounds): one value says nothing about its spread.
"""

import numpy as np
import pandas as pd
from scipy.stats import bootstrap

SEED = 20260101
N_RESAMPLES = 4000
CONFIDENCE = 0.95
_INTERVAL = {"low": np.nan, "high": np.nan}


def _mean_difference(a, b, axis=-1):
    return a.mean(axis=axis) - b.mean(axis=axis)


def _percentile_interval(samples, statistic, n_resamples, confidence, seed):
    """(low, high): scipy's percentile bootstrap of `statistic` over `samples`, each resampled
    on its own."""
    result = bootstrap(samples, statistic, n_resamples=n_resamples, confidence_level=confidence,
                       method="percentile", vectorized=True, rng=np.random.default_rng(seed))
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def bootstrap_mean(values, *, n_resamples=N_RESAMPLES, confidence=CONFIDENCE, seed=SEED):
    """The mean of `values` with its percentile-bootstrap interval.

    Parameters
    ----------
    values : array-like of shape (n_units,)
        One value per resampling unit; NaN values are left out.
    n_resamples : int, default=N_RESAMPLES
        Number of bootstrap resamples.
    confidence : float, default=CONFIDENCE
        Coverage of the interval.
    seed : int, default=SEED
        Seed of the resampling generator.

    Returns
    -------
    dict
        ``mean``, ``low``, ``high`` (NaN bounds with fewer than two values) and ``n``, the
        number of units used.
    """
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if len(values) == 0:
        return {"mean": np.nan, **_INTERVAL, "n": 0}
    out = {"mean": float(values.mean()), **_INTERVAL, "n": len(values)}
    if len(values) > 1:
        low, high = _percentile_interval((values,), np.mean, n_resamples, confidence, seed)
        # Clipped to the sample's range: a constant sample gives exactly zero width.
        out.update(low=float(max(low, values.min())), high=float(min(high, values.max())))
    return out


def bootstrap_paired_difference(a, b, **kwargs):
    """Mean of a - b over paired units, with its bootstrap interval (units resampled together:
    the interval of the mean of the paired differences).

    Parameters
    ----------
    a, b : array-like of shape (n_units,)
        The two methods' values on the same units, in the same order.
    **kwargs
        `n_resamples`, `confidence`, `seed` as in `bootstrap_mean`.

    Returns
    -------
    dict
        As `bootstrap_mean`, for the differences a - b.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired values need the same shape, got {a.shape} and {b.shape}")
    return bootstrap_mean(a - b, **kwargs)


def bootstrap_difference(a, b, *, n_resamples=N_RESAMPLES, confidence=CONFIDENCE, seed=SEED):
    """Mean of `a` minus mean of `b` for two independent samples, each resampled on its own.

    Parameters
    ----------
    a, b : array-like
        The two samples (e.g. the trials of two grid levels); NaN values are left out.
    n_resamples, confidence, seed
        As in `bootstrap_mean`.

    Returns
    -------
    dict
        ``mean`` (the difference), ``low``, ``high`` (NaN unless both samples have two or
        more values) and ``n``, the smaller sample size.
    """
    a, b = (np.asarray(v, dtype=float) for v in (a, b))
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    n = min(len(a), len(b))
    if n == 0:
        return {"mean": np.nan, **_INTERVAL, "n": 0}
    out = {"mean": float(a.mean() - b.mean()), **_INTERVAL, "n": n}
    if n > 1:
        low, high = _percentile_interval((a, b), _mean_difference, n_resamples, confidence, seed)
        out.update(low=low, high=high)
    return out


def paired_reference(method):
    """The SSC a method is paired with: kssc* -> ssc* (same suffix), others -> "ssc", SSC
    itself -> None."""
    if method.startswith("ssc"):
        return None
    if method.startswith("kssc"):
        return method[1:]
    return "ssc"


def interval_columns(frame, keys, value="error_pct", unit="trial"):
    """Per group of `keys` (which include "method"): `value`'s bootstrap interval over units,
    and the paired difference to the group's SSC (`paired_reference`) on the same units.

    Parameters
    ----------
    frame : DataFrame
        One row per (keys, unit) fit, or several (averaged within the unit first).
    keys : list of str
        The grid cell's columns and "method".
    value : str, default="error_pct"
        The column summarised.
    unit : str, default="trial"
        The resampling unit's column (trials share a data draw across methods).

    Returns
    -------
    DataFrame
        Indexed by `keys`, with ``<value>_ci_low``, ``<value>_ci_high``, ``paired_with``
        (the SSC method, empty when none ran) and ``<value>_vs_ssc_mean``,
        ``<value>_vs_ssc_low``, ``<value>_vs_ssc_high`` (method minus SSC).
    """
    per_unit = frame.groupby([*keys, unit], sort=False, dropna=False)[value].mean()
    levels = list(range(len(keys)))
    by_group = {(key if isinstance(key, tuple) else (key,)): series.droplevel(levels)
                for key, series in per_unit.groupby(level=levels, sort=False)}
    rows = []
    for key, series in by_group.items():
        named = dict(zip(keys, key, strict=True))
        interval = bootstrap_mean(series.to_numpy())
        row = {**named, f"{value}_ci_low": interval["low"], f"{value}_ci_high": interval["high"],
               "paired_with": "", f"{value}_vs_ssc_mean": np.nan, f"{value}_vs_ssc_low": np.nan,
               f"{value}_vs_ssc_high": np.nan}
        reference = paired_reference(named["method"])
        theirs = by_group.get(tuple(reference if k == "method" else v for k, v in named.items()))
        if theirs is not None:
            common = series.index.intersection(theirs.index)
            diff = bootstrap_paired_difference(series[common].to_numpy(), theirs[common].to_numpy())
            row.update({"paired_with": reference, f"{value}_vs_ssc_mean": diff["mean"],
                        f"{value}_vs_ssc_low": diff["low"], f"{value}_vs_ssc_high": diff["high"]})
        rows.append(row)
    return pd.DataFrame(rows).set_index(keys)
