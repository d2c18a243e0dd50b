"""Baselines benchmark: SSC at the runtime figure's largest size, and all six methods at TIR scale.

Run: `python -m benchmarks.bench_baselines`. Prints tables; asserts nothing.
1. SSC (every solver) on N = 1,000, D = 500: protocol 3.10's data (5 subspaces of dim 4,
   200 points each, coefficients N(0.25, var 0.001), noise 0.05 before normalising).
2. KSSC, SSC, GFS, GSC, SSSC and TSC with the paper's parameters on N = 2,500 large-scale
   TIR points (protocol 3.5: 5 subspaces x 500 points, 3 library spectra each, no noise),
   from the real TIR library when the data folder has it, else random subspaces of dim 3
   in D = 321. "fit" is the whole fit; "repr." is what the paper times (Z construction;
   the whole pipeline for SSSC).
"""

import os
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from kssc import KSSC, clustering_error
from kssc.baselines import GFS, GSC, SSC, SSSC, TSC
from kssc.datasets import (
    DataNotFoundError,
    load_tir_library,
    make_runtime_data,
    make_subspaces,
    make_tir_large,
)
from kssc.estimator import PAPER_SETTING


def tir_large(n_per_subspace, seed=0):
    """(X, y, description): the large-scale TIR data, or a stand-in without the library."""
    try:
        library, _ = load_tir_library(os.environ.get("KSSC_DATA_DIR"))
    except (DataNotFoundError, FileNotFoundError, OSError):
        X, y, _ = make_subspaces(5, 3, n_per_subspace, 321, random_state=seed)
        return X, y, "random subspaces of dim 3 in D = 321 (TIR library not found)"
    X, y = make_tir_large(library, n_per_subspace, random_state=seed)
    return X, y, "TIR library, make_tir_large (3 spectra per subspace, D = 321)"


def fit_row(name, model, X, y):
    start = time.perf_counter()
    model.fit(X)
    total = time.perf_counter() - start
    t = model.timings_
    n_iter = getattr(model, "n_iter_", None)
    iters = "" if n_iter is None else f"{int(np.max(n_iter)):6d}"
    print(f"  {name:28s} {total:8.2f} {t['representation']:8.2f} {t['spectral']:8.2f} "
          f"{clustering_error(y, model.labels_):8.2f} {iters}")


def main():
    warnings.simplefilter("ignore", ConvergenceWarning)
    header = (f"  {'method':28s} {'fit (s)':>8s} {'repr.':>8s} {'spectral':>8s} "
              f"{'error %':>8s} {'iter':>6s}")

    X, y, _ = make_runtime_data(200, random_state=0)
    print("1. SSC, N = 1,000, D = 500 (protocol 3.10 data), lambda = 0.1")
    print(header)
    for name, kwargs in [("SSC relaxed (ssc_relaxed)", {}),
                         ("SSC relaxed, column-wise", {"column_wise": True}),
                         ("SSC exact (ssc_exact)", {"solver": "exact"}),
                         ("SSC exact, column-wise", {"solver": "exact", "column_wise": True})]:
        fit_row(name, SSC(5, random_state=0, **kwargs), X, y)
    fit_row("KSSC relaxed, k = 6", KSSC(5, n_neighbors=6, random_state=0, **PAPER_SETTING), X, y)

    X, y, source = tir_large(500)
    print(f"\n2. N = {len(X):,}, {source}")
    print(header)
    methods = [
        ("KSSC (k = 20)", KSSC(5, n_neighbors=20, random_state=0, **PAPER_SETTING)),
        ("SSC relaxed", SSC(5, random_state=0)),
        ("GFS (k_max = 10)", GFS(5, k_max=10, random_state=0)),
        ("GSC (K = 10, max dim 5)", GSC(5, n_neighbors=10, max_subspace_dim=5, random_state=0)),
        ("SSSC (20 in-sample)", SSSC(5, n_in_sample=20, random_state=0)),
        ("TSC (q = 20)", TSC(5, n_neighbors=20, random_state=0)),
    ]
    for name, model in methods:
        fit_row(name, model, X, y)


if __name__ == "__main__":
    main()
