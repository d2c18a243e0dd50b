"""Figure:tir_results2 (rigid motion) and the right panel of Figure:tir_motion_time
(docs/protocol.md).

The 41 full checkerboard and traffic sequences the paper's code shipped; trajectories
stacked as X (P, 2F), points sorted by motion, Gaussian noise sigma = 0..0.4 added to the
raw coordinates, one draw per sequence and level; six methods on the same data.
"""

import numpy as np

from kssc.datasets import load_hopkins_sequence, select_hopkins_sequences
from kssc.metrics import psnr

from ._trial import Experiment, data_seed, fit_methods, summarise_by


def tasks(exp, data_dir):
    names = select_hopkins_sequences(exp.get("sequences"), exp["subset"], data_dir)
    return [({"noise": s, "sequence": name}, t) for t in range(exp["trials"])
            for s in exp["noise"] for name in names]


def trial(context, cell, trial, seed):
    X, y = load_hopkins_sequence(cell["sequence"], data_dir=context["data_dir"])
    order = np.argsort(y, kind="stable")
    X_clean, y = X[order], y[order]
    rng = np.random.default_rng(data_seed(seed))
    X = X_clean + cell["noise"] * rng.standard_normal(X_clean.shape)
    psnr_code, psnr_db = psnr(X_clean, X, unit="code"), psnr(X_clean, X, unit="db")
    rows = fit_methods(context, X, y, seed)
    for row in rows:
        row.update(psnr_code=psnr_code, psnr_db=psnr_db, n_samples=len(y),
                   n_motions=len(np.unique(y)), n_frames=X.shape[1] // 2)
    return rows


EXPERIMENT = Experiment(tasks=tasks, trial=trial, summary=summarise_by("noise"))
