"""Figure:tir_results2 (rigid motion) and the right panel of Figure:tir_motion_time (3.6).

The 41 full checkerboard and traffic sequences the paper's code shipped; trajectories
stacked as X (P, 2F), points sorted by motion, Gaussian noise sigma = 0..0.4 added to the
raw coordinates, one draw per sequence and level; six methods on the same data.
"""

import numpy as np

from kssc.datasets import list_hopkins_sequences, load_hopkins_sequence
from kssc.metrics import psnr

from ._runner import data_seed, fit_methods, check_config, run_experiment


def sequences(exp, data_dir=None):
    if exp.get("sequences") is not None:
        return list(exp["sequences"])
    return sorted(list_hopkins_sequences(subset=exp["subset"], data_dir=data_dir))


def tasks(exp, data_dir=None):
    return [({"noise": s, "sequence": name}, t) for t in range(exp.trials)
            for s in exp.noise for name in sequences(exp, data_dir)]


def trial(context, cell, trial, seed):
    X, y = load_hopkins_sequence(cell["sequence"], data_dir=context["data_dir"])
    order = np.argsort(y, kind="stable")
    X_clean, y = X[order], y[order]
    rng = np.random.default_rng(data_seed(seed))
    X = X_clean + cell["noise"] * rng.standard_normal(X_clean.shape)
    psnr_code, psnr_db = psnr(X_clean, X, unit="code"), psnr(X_clean, X, unit="db")
    rows = fit_methods(context, X, y, seed)
    for row in rows:
        row.update(psnr_code=psnr_code, psnr_db=psnr_db, N=len(y), n_motions=len(np.unique(y)),
                   n_frames=X.shape[1] // 2)
    return rows


def run(cfg, **kwargs):
    cfg = check_config(cfg)
    from ._runner import data_dir
    exp = cfg.experiment
    return run_experiment(cfg, tasks(exp, str(data_dir(cfg.data_dir))), trial, **kwargs)
