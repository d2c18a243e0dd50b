"""How KSSC's default setting is chosen: candidate general-purpose settings on synthetic
unions of random subspaces (no real data set takes part in the choice).

Every cell is one kind of union (`experiment.unions`: size, ambient dimension, number and
dimensions of the subspaces, noise), drawn afresh per trial with
`make_union_of_subspaces`; every candidate (a method of the config) is fitted on each draw.
The summary gives each candidate's mean error per cell and over all cells (the mean of the
cell means), and marks the candidate with the lowest overall mean (`chosen`), which
becomes `KSSC`'s defaults (conf/method/kssc_generic.yaml; docs/protocol.md 7.3). Real data
sets judge it afterwards: digits, the Yale B groups and Hopkins 155.
"""

import pandas as pd

from kssc.datasets import make_union_of_subspaces

from ._trial import Experiment, data_seed, fit_methods


def tasks(exp, data_dir=None):
    return [({"union": name}, t) for name in exp["unions"] for t in range(exp["trials"])]


def trial(context, cell, trial, seed):
    union = context["experiment"]["unions"][cell["union"]]
    X, y = make_union_of_subspaces(**union, random_state=data_seed(seed))
    rows = fit_methods(context, X, y, seed)
    for row in rows:
        row.update(n_samples=len(y), ambient_dim=X.shape[1])
    return rows


def summary(frame, exp=None):
    """Mean and median error per candidate and union, then over all unions (mean of the
    union means; a failed fit scores 100 %), with the chosen candidate marked."""
    scored = frame.assign(error_pct=frame["error_pct"].fillna(100.0))
    grouped = scored.groupby(["union", "method"], sort=False)
    table = grouped.agg(n_trials=("trial", "size"), error_pct_mean=("error_pct", "mean"),
                        error_pct_median=("error_pct", "median"),
                        time_fit_s_mean=("time_fit_s", "mean")).reset_index()
    table["n_failed"] = grouped["failed"].sum().to_numpy().astype(int)
    overall = table.groupby("method", sort=False).agg(
        n_trials=("n_trials", "sum"), n_failed=("n_failed", "sum"),
        error_pct_mean=("error_pct_mean", "mean"), error_pct_median=("error_pct_median", "mean"),
        time_fit_s_mean=("time_fit_s_mean", "mean")).reset_index().assign(union="all")
    chosen = overall.loc[overall["error_pct_mean"].idxmin(), "method"]
    table = pd.concat([table, overall], ignore_index=True)
    table["chosen"] = table["method"] == chosen
    return table


EXPERIMENT = Experiment(tasks=tasks, trial=trial, summary=summary)
