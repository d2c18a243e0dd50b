"""What a user is told: sparse input refused with what to do, the first-compile notice."""

import numpy as np
import pytest
import scipy.sparse as sp

from kssc import KSSC
from kssc.baselines import SSC, SSSC
from kssc.coding import _kernels
from kssc.datasets import make_subspaces


@pytest.mark.parametrize("make", [SSC, SSSC])  # KSSC fits sparse X: tests/kssc/test_sparse_input.py
@pytest.mark.parametrize("container", [sp.csr_matrix, sp.csc_array])
def test_sparse_input_is_refused_with_what_to_do(make, container):
    X = container(sp.random(40, 30, density=0.1, random_state=0))
    with pytest.raises(TypeError, match=r"takes dense data; got a sparse (csr|csc) matrix of "
                                        r"shape \(40, 30\).*X\.toarray\(\).*TruncatedSVD"):
        make(2).fit(X)


def test_sparse_new_points_are_refused():
    X, _, _ = make_subspaces(2, 2, 20, 10, random_state=0)
    model = KSSC(2, n_neighbors=5, random_state=0).fit(X)
    with pytest.raises(TypeError, match="KSSC.predict takes dense data"):
        model.predict(sp.csr_matrix(X))
    # The conversion the message names works.
    np.testing.assert_array_equal(model.predict(sp.csr_matrix(X).toarray()), model.labels_)


def test_compile_notice_once_per_process_and_only_when_not_cached(monkeypatch, capsys):
    X, _, _ = make_subspaces(2, 2, 20, 10, random_state=0)
    monkeypatch.setattr(_kernels, "_compile_noticed", False)
    monkeypatch.setattr(_kernels, "is_cached", lambda dispatcher: False)
    monkeypatch.setenv(_kernels.NO_FILL, "1")  # a first import here does not fill the cache
    KSSC(2, n_neighbors=5, random_state=0).fit(X)
    KSSC(2, n_neighbors=5, random_state=0).fit(X)
    err = capsys.readouterr().err
    assert err.count("kssc: compiling the coefficient kernels") == 1


def test_no_notice_when_the_kernels_are_cached(monkeypatch, capsys):
    X, _, _ = make_subspaces(2, 2, 20, 10, random_state=0)
    KSSC(2, n_neighbors=5, random_state=0).fit(X)  # compiled (and cached) by now
    from kssc.coding import _point_kernels

    assert _kernels.is_cached(_point_kernels.solve_blocks)
    monkeypatch.setattr(_kernels, "_compile_noticed", False)
    KSSC(2, n_neighbors=5, random_state=0).fit(X)
    assert "compiling" not in capsys.readouterr().err


def test_an_empty_numba_cache_reads_as_not_cached(tmp_path):
    import subprocess
    import sys

    from experiments._checkout import REPO_ROOT

    code = ("from kssc.coding import _kernels, _point_kernels as k; "
            "print(_kernels.is_cached(k.solve_blocks))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=REPO_ROOT, env={"NUMBA_CACHE_DIR": str(tmp_path),
                                                "PYTHONPATH": str(REPO_ROOT),
                                                _kernels.NO_FILL: "1"}, check=True)
    assert result.stdout.strip() == "False"
