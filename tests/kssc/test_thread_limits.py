"""The thread counts inside the stages (issue 25, item 4): what makes two cores no slower
than one is checked here by its mechanism, never by timing."""

import os
import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from kssc.coding import representation
from kssc.coding.admm import ADMM
from kssc.coding.representation import kssc_coefficients
from kssc.spectral import _clustering as spectral
from kssc.spectral._clustering import _normalized_affinity, top_eigenvectors


def _blas_threads():
    # The BLAS numpy and scipy call (the kernels' LAPACK, eigh). faiss ships an OpenMP build
    # of OpenBLAS whose thread count is per calling thread: once another test has imported
    # faiss it reports its default in joblib's threads, although nothing here calls it.
    return max((p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"
                and ("numpy" in p["filepath"] or "scipy" in p["filepath"])), default=1)


def _block_affinity(n=300, blocks=3, seed=0):
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(blocks), n // blocks)
    W = np.where(labels[:, None] == labels[None, :], rng.uniform(0.5, 1, (n, n)), 0.01)
    W = (W + W.T) / 2
    np.fill_diagonal(W, 0)
    return W


def test_dense_eigensolver_runs_on_one_blas_thread(monkeypatch):
    seen, original = [], spectral.eigh

    def probe(*args, **kwargs):
        seen.append(_blas_threads())
        return original(*args, **kwargs)

    monkeypatch.setattr(spectral, "eigh", probe)
    P, _ = _normalized_affinity(_block_affinity())
    with threadpool_limits(limits=2, user_api="blas"):
        values, vectors = top_eigenvectors(P, 3)
    assert seen and set(seen) == {1}
    # The result is still the eigendecomposition numpy's own solver gives.
    reference = np.linalg.eigvalsh(P.toarray())[::-1][:3]
    np.testing.assert_allclose(values, reference, atol=1e-10)


def _problem(n=400, d=30, k=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    indices = np.stack([rng.choice(np.delete(np.arange(n), i), k, replace=False)
                        for i in range(n)])
    return X, indices


@pytest.mark.parametrize("solver", ["relaxed", "exact", "admm"])
def test_n_jobs_runs_chunks_in_threads_of_this_process_on_one_blas_thread(solver, monkeypatch):
    X, indices = _problem()
    name = "_admm_each" if solver == "admm" else "_solve_chunk"
    original = getattr(representation, name)
    calls = []

    def probe(*args, **kwargs):
        calls.append((os.getpid(), threading.get_ident(), _blas_threads()))
        return original(*args, **kwargs)

    make = (lambda: ADMM(stopping="each")) if solver == "admm" else (lambda: solver)
    serial = kssc_coefficients(X, indices, 0.05, solver=make(), positive=True)
    monkeypatch.setattr(representation, name, probe)
    with threadpool_limits(limits=2, user_api="blas"):
        threaded = kssc_coefficients(X, indices, 0.05, solver=make(), positive=True, n_jobs=2,
                                     chunk_size=len(X) // 4)
    # One chunk per worker at least, every one in this process (no worker process has to
    # import numba inside the fit), each on one BLAS thread.
    # The calls' (pid, thread, BLAS threads) and the BLAS libraries, should one fail.
    seen = f"calls {calls}; BLAS {[(p['filepath'], p['num_threads']) for p in threadpool_info()]}"
    assert len(calls) >= 2, seen
    assert {pid for pid, _, _ in calls} == {os.getpid()}, seen
    assert {blas for _, _, blas in calls} == {1}, seen
    # Chunking does not change any point's code: the serial run is the reference. Its BLAS
    # may run on several threads where the chunks' runs on one, which can move a product's
    # last bit (seen in full runs on a loaded machine: 1 ulp), hence the tolerance.
    for a, b in zip(serial, threaded, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15, err_msg=seen)


@pytest.mark.parametrize("solver", ["relaxed", "exact", "admm_each", "admm_all"])
def test_n_jobs_on_a_problem_of_one_default_chunk_runs_on_at_most_n_jobs_numba_threads(
        solver, monkeypatch):
    # joblib's start-up cost 3x the coding of 1,000 points (runtime_cores: 2 cores slower
    # than 1); such a problem runs in one call on numba's threads, at most n_jobs of them.
    import numba

    X, indices = _problem()
    admm = solver.startswith("admm")
    make = (lambda: ADMM(stopping=solver[5:])) if admm else (lambda: solver)
    name = {"admm_each": "_admm_each", "admm_all": "_admm_advance"}.get(solver, "_solve_chunk")
    serial = kssc_coefficients(X, indices, 0.05, solver=make(), positive=True)
    calls = []
    original = getattr(representation, name)

    def probe(*args, **kwargs):
        calls.append((threading.get_ident(), args[-1], numba.get_num_threads()))
        return original(*args, **kwargs)

    monkeypatch.setattr(representation, name, probe)
    threads = numba.get_num_threads()
    one = kssc_coefficients(X, indices, 0.05, solver=make(), positive=True, n_jobs=1)
    # ADMM's "all" rule advances its one chunk in rounds: every call on this thread.
    assert calls and set(calls) == {(threading.get_ident(), True, threads)}
    calls.clear()
    two = kssc_coefficients(X, indices, 0.05, solver=make(), positive=True, n_jobs=2)
    assert calls and set(calls) == {(threading.get_ident(), True, min(2, threads))}
    assert numba.get_num_threads() == threads  # restored
    for reference, result in ((serial, one), (serial, two)):
        for a, b in zip(reference, result, strict=True):
            np.testing.assert_array_equal(a, b)
