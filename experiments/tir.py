"""Figure:tir_results and the left panel of Figure:tir_motion_time (docs/protocol.md 3.4).

Semi-synthetic hyperspectral data: 5 subspaces, each spanned by 5 spectra of the TIR
library drawn with replacement, 20 points each with correlated Gaussian coefficients;
Gaussian noise sigma = 0..0.4 on the un-normalised data; six methods on the same data.
"""

from functools import lru_cache

from kssc.datasets import load_tir_library, make_tir
from kssc.metrics import psnr

from ._runner import data_seed, fit_methods, check_config, run_experiment


@lru_cache(maxsize=2)
def tir_library(data_dir):
    return load_tir_library(data_dir=data_dir)[0]


def tasks(exp):
    return [({"noise": s}, t) for t in range(exp.trials) for s in exp.noise]


def trial(context, cell, trial, seed):
    exp = context["experiment"]
    X, y, X_clean = make_tir(tir_library(context["data_dir"]), n_subspaces=exp["n_subspaces"],
                             n_spectra=exp["n_spectra"], n_per_subspace=exp["n_per_subspace"],
                             noise=cell["noise"], random_state=data_seed(seed))
    psnr_code, psnr_db = psnr(X_clean, X, unit="code"), psnr(X_clean, X, unit="db")
    rows = fit_methods(context, X, y, seed)
    for row in rows:
        row.update(psnr_code=psnr_code, psnr_db=psnr_db, N=len(y))
    return rows


def run(cfg, **kwargs):
    cfg = check_config(cfg)
    return run_experiment(cfg, tasks(cfg.experiment), trial, **kwargs)
