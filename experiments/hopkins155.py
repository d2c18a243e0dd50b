"""Hopkins 155, the standard benchmark: all 155 sequences, no added noise, tuned methods.

Each sequence is fitted `experiment.trials` times with different seeds (trajectories X
(P, 2F) in file order, the labels as stored): k-SSC's random candidates move its benchmark
mean by about 0.1 point from draw to draw, so the table averages over the draws;
every method's settings are fixed once for the whole data set (conf/method/*_tuned.yaml
with the overrides of conf/experiment/hopkins155.yaml), never per sequence. The summary
table gives error statistics over the 2-motion, 3-motion and all sequences, the spread of
the benchmark mean over trials and the mean fit time per method; the published SSC
figures are in the config (`feeds`), beside the claims they feed.
"""

import pandas as pd

from kssc.datasets import load_hopkins_sequence
from kssc.datasets.hopkins import hopkins_metadata

from ._bootstrap import interval_columns
from ._hopkins_tasks import sequence_tasks
from ._trial import Experiment, fit_methods


def trial(context, cell, trial, seed):
    X, y = load_hopkins_sequence(cell["sequence"], data_dir=context["data_dir"])
    info = hopkins_metadata()[cell["sequence"]]
    rows = fit_methods(context, X, y, seed)
    for row in rows:
        row.update(n_samples=len(y), n_motions=info["n_motions"], n_frames=info["n_frames"],
                   category=info["category"])
    return rows


def summary(frame, exp=None):
    """Per method and group (2 motions, 3 motions, all) over every (sequence, trial) fit; the
    95 % bootstrap interval of the mean and the paired difference to SSC resample sequences
    (each sequence's mean over its trials)."""
    rows = []
    groups = [("2 motions", frame["n_motions"] == 2), ("3 motions", frame["n_motions"] == 3),
              ("all", frame["n_motions"].notna())]
    for method, by_method in frame.groupby("method", sort=False):
        for group, mask in groups:
            part = by_method[mask.loc[by_method.index]]
            if part.empty:
                continue
            err = part["error_pct"]
            per_trial = err.groupby(part["trial"]).mean()
            rows.append({"group": group, "method": method,
                         "n_sequences": part["sequence"].nunique(), "n_trials": len(part),
                         "n_failed": int(part["failed"].sum()), "error_pct_mean": err.mean(),
                         "error_pct_median": err.median(),
                         "error_pct_trial_mean_min": per_trial.min(),
                         "error_pct_trial_mean_max": per_trial.max(),
                         "time_fit_s_mean": part["time_fit_s"].mean(),
                         "time_representation_s_mean": part["time_representation_s"].mean()})
    table = pd.DataFrame(rows).set_index(["group", "method"])
    intervals = pd.concat([interval_columns(frame[mask].assign(group=group), ["group", "method"],
                                            unit="sequence") for group, mask in groups])
    return table.join(intervals).reset_index()


EXPERIMENT = Experiment(tasks=sequence_tasks, trial=trial, summary=summary)
