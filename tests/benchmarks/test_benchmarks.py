"""The benchmark helpers run: the machine's ceilings and the side-by-side with the peers."""

import importlib.util
import math

import numba
import numpy as np
import pytest

from support import REPO_ROOT

BENCHMARKS = REPO_ROOT / "benchmarks"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ceilings_are_positive_finite_rates():
    ceilings = _load("ceilings")
    for rate in (ceilings.gemm_gflops(np.float32, n=64, repeats=1),
                 ceilings.gemm_gflops(np.float64, n=64, repeats=1),
                 ceilings.spmv_gbps(n=1000, repeats=1)):
        assert math.isfinite(rate) and rate > 0


def test_csr_bytes_counts_the_arrays_and_both_vectors():
    ceilings = _load("ceilings")
    matrix = ceilings.affinity_like(10, nnz_per_row=3)
    # 30 float64 values, 30 int32 columns, 11 int32 row pointers, x and y of 10 float64.
    assert ceilings.csr_bytes(matrix) == 30 * 8 + 30 * 4 + 11 * 4 + 2 * 10 * 8
    assert (np.diff(matrix.indptr) == 3).all()


def test_bench_peers_runs_every_method_and_writes_csv_and_figure(tmp_path, monkeypatch):
    pytest.importorskip("hydra")
    pytest.importorskip("matplotlib")
    peers = _load("bench_peers")
    monkeypatch.setenv("KSSC_PEER_DIR", str(tmp_path / "absent"))
    output, figure = tmp_path / "peers.csv", tmp_path / "peers.png"
    frame = peers.main(["--sizes", "100", "--output", str(output), "--figure", str(figure)])
    assert list(frame.method) == ["kssc", "kssc_tuned", "spectral_knn", "kmeans"]
    assert (frame.time_s > 0).all() and frame.error.between(0, 100).all()
    assert frame.loc[frame.method == "kssc", "time_ratio_to_kssc"].item() == 1.0
    assert output.is_file() and figure.is_file()
    assert (tmp_path / "peers.meta.json").is_file()


@pytest.mark.parametrize("name", ["bench_kssc", "bench_coefficients"])
def test_speed_benchmarks_write_their_table(name, tmp_path):
    pd = pytest.importorskip("pandas")
    output = tmp_path / f"{name}.csv"
    _load(name).main(["--n", "600", "--output", str(output)])
    frame = pd.read_csv(output)
    assert output.with_suffix(".meta.json").is_file()
    if name == "bench_kssc":
        assert list(frame["call"]) == ["first", "second"]
        assert (frame["error_pct"] == 0).all() and (frame["time_fit_s"] > 0).all()
    else:
        assert set(frame["solver"]) == {"relaxed", "exact", "ADMM"}
        assert sorted(frame["n_samples"].unique()) == [150, 300, 600, 1200]


def test_distributed_model_recovers_a_linear_cost_and_divides_it_by_workers():
    bench = _load("bench_distributed")
    rows = [{"n_samples": n, "workers": 1, **{f"time_{stage}_s": 2.0 + 3e-5 * n * (i + 1)
                                              for i, stage in enumerate(bench.STAGES)}}
            for n in (10_000, 40_000, 90_000)]
    rows.append({**rows[0], "workers": 2, "time_spectral_s": 1e9})  # not a 1-worker row
    model = bench.fit_model(rows)
    for i, stage in enumerate(bench.STAGES):
        np.testing.assert_allclose(model[stage], [2.0, 3e-5 * (i + 1)], rtol=1e-9)
    predicted = bench.predict(model, 10**6, 4)
    assert predicted["neighbours"] == pytest.approx(2.0 + 30.0 / 4)
    bound = bench.shuffle_bound(1000, 1)
    assert bound["eigen_halo per iteration"] == 0  # one worker: no halo crosses
    assert bound["transpose"] == 1000 * 20 * 16


def test_bench_cores_records_the_threads_each_stage_ran_on(tmp_path):
    pytest.importorskip("pandas")
    frame = _load("bench_cores").main(["--n-per-subspace", "40", "--repeats", "2", "--methods",
                                       "kssc_relaxed", "kssc_admm",
                                       "--output", str(tmp_path / "cores.csv")])
    assert list(frame.method) == ["kssc_relaxed", "kssc_relaxed", "kssc_admm", "kssc_admm"]
    assert list(frame.cores) == [1, 2, 1, 2]
    # Coefficients: in this process, on one BLAS thread; at n_jobs = 2 the small problem (one
    # default chunk) in one call on 2 of numba's threads, for either solver; the eigensolver
    # on one BLAS thread.
    assert (frame.coef_processes == 1).all() and (frame.coef_blas_threads == 1).all()
    two = frame[frame.cores == 2].set_index("method")
    assert (two.coef_calls == 1).all()
    assert (two.coef_numba_threads == min(2, numba.config.NUMBA_NUM_THREADS)).all()
    assert (frame.eigen_blas_threads == 1).all()
    assert (tmp_path / "cores.csv").is_file() and (tmp_path / "cores.meta.json").is_file()
    assert (frame.repeats == 2).all()


def test_bench_memory_reports_every_step_and_restores_the_package(capsys):
    # A small fit through the traced wrappers: every step prints a line, the outer steps'
    # peaks are at least their inner steps', and the package's functions are put back.
    import kssc._base as base
    import kssc._multilevel as multilevel
    import kssc.affinity as affinity

    before = (base.timed, affinity.symmetric_affinity, multilevel.refine)
    _load("bench_memory").main(["--n", "3000"])
    out = capsys.readouterr().out
    peaks = {line.split(":")[0].strip(): float(line.split("peak")[1].split("GiB")[0])
             for line in out.splitlines() if "GiB, peak" in line}
    for step in ("nearest_neighbors alone", "stage neighbours", "stage coefficients",
                 "symmetric_affinity", "stage spectral", "fit"):
        assert step in peaks
    assert peaks["fit"] >= max(peaks["stage spectral"], peaks["stage neighbours"])
    assert "error 0.00 %" in out
    assert (base.timed, affinity.symmetric_affinity, multilevel.refine) == before
