"""Table:face_results (docs/protocol.md 3.7): three random subjects of Extended Yale B.

Two variants in one run (column `variant`):
- faithful: subjects drawn with replacement (a repeated subject is a separate class of
  identical images, as `randi` gave), the 64 files per subject include the .pgm.bad ones
  (yaleB15's all-zero image included; the estimators guard zero-norm points);
- clean: three distinct subjects, .bad images excluded.
Images 96 x 84 (8064-d), pixel / 255.
"""

from functools import lru_cache

import numpy as np
import pandas as pd

from kssc.datasets import load_yaleb

from ._runner import data_seed, fit_methods, check_config, run_experiment

VARIANTS = {"faithful": {"replace": True, "include_bad": True},
            "clean": {"replace": False, "include_bad": False}}


@lru_cache(maxsize=128)
def subject_images(data_dir, subject, size, include_bad, n_per_subject):
    X, _ = load_yaleb(subjects=[subject], size=size, include_bad=include_bad,
                      n_per_subject=n_per_subject, data_dir=data_dir)
    return X


def draw_subjects(exp, variant, seed):
    rng = np.random.default_rng(data_seed(seed))
    picks = rng.choice(len(exp["subjects"]), size=exp["n_draw"], replace=VARIANTS[variant]["replace"])
    return [int(exp["subjects"][i]) for i in picks]


def tasks(exp):
    for variant in exp.variants:
        if variant not in VARIANTS:
            raise ValueError(f"Unknown yale variant {variant!r}; choose from {list(VARIANTS)}.")
    return [({"variant": v}, t) for t in range(exp.trials) for v in exp.variants]


def trial(context, cell, trial, seed):
    exp = context["experiment"]
    variant = VARIANTS[cell["variant"]]
    subjects = draw_subjects(exp, cell["variant"], seed)
    size = tuple(exp["size"]) if exp.get("size") else None
    blocks = [subject_images(context["data_dir"], s, size, variant["include_bad"],
                             exp["n_per_subject"]) for s in subjects]
    X = np.vstack(blocks)
    # Labels by draw position: a subject drawn twice gives two classes of identical images.
    y = np.repeat(np.arange(len(blocks)), [len(b) for b in blocks])
    rows = fit_methods(context, X, y, seed)
    for row in rows:
        row.update(subjects="-".join(map(str, subjects)), duplicate=len(set(subjects)) < len(subjects),
                   N=len(y), D=X.shape[1])
    return rows


def face_table(frame, cfg=None):
    """Table:face_results: SCE statistics (std with N - 1, as MATLAB) and mean time."""
    rows = []
    for (variant, method), group in frame.groupby(["variant", "method"], sort=False):
        err = group["error"]
        time_col = "time_fit" if method == "sssc" else "time_representation"
        rows.append({"variant": variant, "method": method, "trials": len(group),
                     "failed": int(group["failed"].sum()), "Mean": err.mean(),
                     "Median": err.median(), "Min": err.min(), "Max": err.max(),
                     "Std": err.std(ddof=1), "time_mean": group[time_col].mean(),
                     "time_fit_mean": group["time_fit"].mean()})
    return pd.DataFrame(rows)


def run(cfg, **kwargs):
    cfg = check_config(cfg)
    return run_experiment(cfg, tasks(cfg.experiment), trial,
                          aggregate=lambda frame, _: {"yale_table.csv": face_table(frame)}, **kwargs)
