"""Extended Yale B with 2, 3, 5, 8 and 10 subjects: clean images, tuned methods.

Every trial draws `n_subjects` distinct subjects at random (no repeats), takes all their
non-.bad images at 48 x 42 pixels (2,016-d, pixel / 255), and fits every method with the
settings fixed once for the data set. The summary table gives mean and median error per
number of subjects and the mean fit time, beside Elhamifar and Vidal's published SSC means.
"""

import numpy as np
import pandas as pd

from ._runner import check_config, data_seed, fit_methods, run_experiment
from .yale import subject_images

# SSC (Elhamifar and Vidal, TPAMI 2013; recalled [R] in research/anchors.md): mean error % by number of subjects.
PUBLISHED_SSC = {2: 1.86, 3: 3.10, 5: 4.31, 8: 5.85, 10: 10.94}


def tasks(exp):
    return [({"n_subjects": int(n)}, t) for n in exp.n_subjects for t in range(exp.trials)]


def draw_subjects(exp, n_subjects, seed):
    rng = np.random.default_rng(data_seed(seed))
    picks = rng.choice(len(exp["subjects"]), size=n_subjects, replace=False)
    return sorted(int(exp["subjects"][i]) for i in picks)


def trial(context, cell, trial, seed):
    exp = context["experiment"]
    subjects = draw_subjects(exp, cell["n_subjects"], seed)
    size = tuple(exp["size"]) if exp.get("size") else None
    blocks = [subject_images(context["data_dir"], s, size, False, exp.get("n_per_subject"))
              for s in subjects]
    X = np.vstack(blocks)
    y = np.repeat(np.arange(len(blocks)), [len(b) for b in blocks])
    rows = fit_methods(context, X, y, seed)
    for row in rows:
        row.update(subjects="-".join(map(str, subjects)), N=len(y), D=X.shape[1])
    return rows


def summary_table(frame, cfg=None):
    """Mean / median error per method and number of subjects, mean fit time."""
    rows = []
    for (n_subjects, method), part in frame.groupby(["n_subjects", "method"], sort=True):
        err = part["error"]
        rows.append({"method": method, "n_subjects": int(n_subjects), "trials": len(part),
                     "failed": int(part["failed"].sum()), "mean": err.mean(),
                     "median": err.median(), "std": err.std(ddof=1),
                     "time_fit_mean": part["time_fit"].mean(),
                     "time_representation_mean": part["time_representation"].mean(),
                     "published_ssc_mean": PUBLISHED_SSC.get(int(n_subjects), np.nan)})
    return pd.DataFrame(rows)


def run(cfg, **kwargs):
    cfg = check_config(cfg)
    return run_experiment(cfg, tasks(cfg.experiment), trial,
                          aggregate=lambda frame, _: {"yale_subjects_table.csv": summary_table(frame)},
                          **kwargs)
