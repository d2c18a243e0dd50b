"""``kssc compile``: every numba kernel family a fit can run, compiled into numba's on-disk
cache before the first fit.

Each family compiles on first use (the coefficient kernels about half a minute, the ADMM
kernels of the faces and motion presets about as long again); a fit that meets an uncached
family says so on stderr and waits. After an install, ``kssc compile`` (or ``python -m kssc
compile``; ``make venv`` runs it) pays that once: it runs one small fit per family on a
synthetic union of subspaces, so later fits start at once.
"""

import os
import sys
import time
import warnings

# The small data every step fits: 3 subspaces of dimension 3 in R^12.
_N_POINTS, _DIM = 300, 12


def _data(n, seed):
    from ..datasets import make_union_of_subspaces

    return make_union_of_subspaces(n, ambient_dim=_DIM, n_subspaces=3, subspace_dims=[3],
                                   noise=0.01, random_state=seed)[0]


def _fit(**params):
    from .. import KSSC

    return KSSC(3, random_state=0, **params).fit(_data(_N_POINTS, 0))


def _approximate():
    from .. import KSSC

    model = KSSC(3, neighbor_algorithm="approximate", random_state=0).fit(_data(2_000, 1))
    model.predict(_data(100, 2))


def _exact_search():
    from ..neighbors import nearest_neighbors

    nearest_neighbors(_data(_N_POINTS, 0), 5, block_size=100)  # row and column blocks


def _lasso():
    import numpy as np

    from ..coding import solve_exact_ladmpsap, solve_lasso_fista

    A = _data(11, 3)  # one problem: row 0 over the other 10
    problem = ((A[1:] @ A[1:].T)[None], (A[1:] @ A[0])[None], np.ones(1), 0.1)
    solve_lasso_fista(*problem)
    solve_exact_ladmpsap(*problem)


def _block_products():
    import numpy as np
    import scipy.sparse as sp

    from ..spectral._multilevel import restrict
    from ..spectral._products import csr_product, ritz_update

    P = sp.random(50, 50, density=0.1, format="csr", random_state=0)
    members = np.arange(50) // 5
    for dtype in (np.float32, np.float64):  # the multilevel route refines in either
        csr_product(P.astype(dtype), np.ones((50, 3), dtype=dtype))
        restrict(P.astype(dtype), members, 10, np.ones(50))
        # The distributed fit's row blocks: weights, and its columns' own, as column views.
        own = np.column_stack([members, np.ones(50)])
        restrict(P.astype(dtype), members, 10, own[:, 1], columns=(members, own[:, 1]))
        S = np.ones((50, 9), dtype=dtype)
        # The Ritz values as `_multilevel._ritz` gives them, a reversed view: a contiguous
        # array is another signature, which the first multilevel fit compiled in-process.
        ritz_update(S, S.copy(), np.ones((9, 3)), np.ones(3)[::-1], 9)


def _ssc():
    from ..baselines import SSC

    SSC(3).fit(_data(_N_POINTS, 0))


def steps():
    """(family, call) pairs: each call runs small fits that compile one kernel family."""
    from ..presets import preset_params

    return [
        ("neighbour search, FISTA coefficients, predict", lambda: _fit().predict(_data(50, 4))),
        ("IVF self-join and its predict", _approximate),
        ("exact solver (LADMPSAP)", lambda: _fit(solver="exact")),
        ("faces preset (ADMM)", lambda: _fit(**preset_params("faces"))),
        # Two neighbour views: predict re-sorts each view's candidates (one view does not).
        ("motion preset and its predict", lambda: _fit(**preset_params("motion")).predict(
            _data(50, 4))),
        ("KSSC defaults (global penalty)", lambda: _fit(**preset_params("generic"))),
        ("blocked exact search", _exact_search),
        ("batched lasso solvers", _lasso),
        ("multilevel eigensolver's products", _block_products),
        ("SSC baseline", _ssc),
    ]


def compile_kernels(stream=None):
    """Run every step of `steps`, one line on `stream` (default: stderr) each; returns the
    total seconds."""
    from ..coding import _kernels

    os.environ[_kernels.NO_FILL] = "1"  # this process compiles them: no `fill_cache` subprocess
    _kernels._compile_noticed = True  # and says so per family below
    stream = sys.stderr if stream is None else stream
    start = time.perf_counter()
    todo = steps()
    print(f"kssc compile: {len(todo)} kernel families into numba's on-disk cache (about a "
          "minute or two the first time, seconds once cached)", file=stream, flush=True)
    for family, call in todo:
        began = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence and size notes on toy data
            call()
        print(f"kssc compile: {family}: {time.perf_counter() - began:.1f} s", file=stream,
              flush=True)
    total = time.perf_counter() - start
    print(f"kssc compile: every kernel family cached in {total:.1f} s", file=stream, flush=True)
    return total
