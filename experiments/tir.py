"""Figure:tir_results and the left panel of Figure:tir_motion_time (docs/protocol.md 3.4).

Semi-synthetic hyperspectral data: 5 subspaces, each spanned by 5 spectra of the TIR
library drawn with replacement, 20 points each with correlated Gaussian coefficients;
Gaussian noise sigma = 0..0.4 on the un-normalised data; six methods on the same data.
"""

from kssc.datasets import make_tir, tir_spectra
from kssc.metrics import psnr

from ._trial import Experiment, data_seed, fit_methods, summarise_by


def tasks(exp, data_dir=None):
    return [({"noise": s}, t) for t in range(exp["trials"]) for s in exp["noise"]]


def trial(context, cell, trial, seed):
    exp = context["experiment"]
    X, y, X_clean = make_tir(tir_spectra(context["data_dir"]), n_subspaces=exp["n_subspaces"],
                             n_spectra=exp["n_spectra"], n_per_subspace=exp["n_per_subspace"],
                             noise=cell["noise"], random_state=data_seed(seed))
    psnr_code, psnr_db = psnr(X_clean, X, unit="code"), psnr(X_clean, X, unit="db")
    rows = fit_methods(context, X, y, seed)
    for row in rows:
        row.update(psnr_code=psnr_code, psnr_db=psnr_db, n_samples=len(y))
    return rows


EXPERIMENT = Experiment(tasks=tasks, trial=trial, summary=summarise_by("noise"))
