"""Figure:synthetic_mv (docs/protocol.md 3.2): SSC vs kSSC error over coefficient mean x variance.

Code constants (D = 50, d = 10, N_i = 20, k = 10); noise sigma is added to unit-norm
points, and the PSNR of each level is recorded both as the code computed it (10 ln(1/MSE),
what the paper's panel titles show) and in true dB.
"""

from kssc.datasets import make_mv_data
from kssc.metrics import psnr

from ._trial import Experiment, data_seed, fit_methods, summarise_by


def tasks(exp, data_dir=None):
    return [({"noise": s, "mean": m, "var": v}, t)
            for t in range(exp["trials"]) for s in exp["noise"] for m in exp["mean"]
            for v in exp["var"]]


def trial(context, cell, trial, seed):
    exp = context["experiment"]
    X, y, X_clean = make_mv_data(cell["mean"], cell["var"], cell["noise"],
                                 ambient_dim=exp["ambient_dim"], subspace_dim=exp["subspace_dim"],
                                 n_per_subspace=exp["n_per_subspace"],
                                 n_subspaces=exp["n_subspaces"], random_state=data_seed(seed))
    psnr_code, psnr_db = psnr(X_clean, X, unit="code"), psnr(X_clean, X, unit="db")
    rows = fit_methods(context, X, y, seed)
    for row in rows:
        row.update(psnr_code=psnr_code, psnr_db=psnr_db, n_samples=len(y))
    return rows


EXPERIMENT = Experiment(tasks=tasks, trial=trial, summary=summarise_by("noise", "mean", "var"))
