"""The benchmark helpers run: the machine's ceilings and the side-by-side with the peers."""

import importlib.util
import math

import numba
import numpy as np
import pytest

from experiments._checkout import REPO_ROOT

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


def test_spectral_steps_keep_the_labels_and_restore_the_functions():
    import importlib

    import scipy.sparse as sp

    from kssc.spectral._clustering import spectral_labels

    bench = _load("bench_spectral")
    rng = np.random.default_rng(0)
    blocks = [rng.uniform(0.5, 1.0, (30, 30)) for _ in range(2)]
    W = sp.csr_matrix(sp.block_diag([(b + b.T) / 2 for b in blocks]))
    W.setdiag(0)
    W.eliminate_zeros()
    W = W + sp.csr_matrix(([1e-3, 1e-3], ([0, 30], [30, 0])), shape=W.shape)  # one graph
    steps = {step: getattr(importlib.import_module(step[0]), step[1]) for step in bench.STEPS}
    labels, report = bench.profile_steps(W, 2)
    assert np.array_equal(labels, spectral_labels(W, 2, "discretize", np.random.RandomState(0)))
    assert np.array_equal(np.bincount(labels), [30, 30]) and labels[0] != labels[30]
    # 60 points: ARPACK's route (no multilevel steps), each step once, in the order it returns.
    assert [name for _, name, *_ in report] == ["linked_points", "_check_graph",
                                                 "_normalized_affinity", "top_eigenvectors",
                                                 "discretize"]
    assert all(depth == 0 and wall >= 0 and peak >= entry > 0
               for depth, _, wall, entry, peak in report)
    assert all(getattr(importlib.import_module(m), n) is f for (m, n), f in steps.items())


@pytest.mark.e2e
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


@pytest.mark.e2e
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


@pytest.mark.e2e  # a benchmark run end to end
def test_bench_predict_writes_rates_and_agreement(tmp_path):
    pd = pytest.importorskip("pandas")
    output = tmp_path / "bench_predict.csv"
    _load("bench_predict").main(["--train", "1500", "--new", "300", "--repeats", "1",
                                 "--output", str(output)])
    frame = pd.read_csv(output)
    assert list(frame["call"]) == ["first", "repeat 1"]
    assert (frame["points_per_s"] > 0).all() and (frame["predict_cpu_us_per_point"] > 0).all()
    assert (frame["repredict_agreement"] >= 0.99).all()
    assert (frame["agreement_with_exact_search"] == 1.0).all()


def test_bench_agreement_writes_every_path_and_seed(tmp_path, monkeypatch):
    pd = pytest.importorskip("pandas")
    bench = _load("bench_agreement")
    # Each path's spectral route, as top_eigenvectors runs it (above its dense limit).
    multilevel = []
    real = bench.spectral._multilevel_top
    monkeypatch.setattr(bench.spectral, "_multilevel_top",
                        lambda P, *a, **k: multilevel.append(P.shape[0]) or real(P, *a, **k))
    output = tmp_path / "bench_agreement.csv"
    bench.main(["--data", "scale", "--n", "3000", "--seeds", "0", "1", "--output", str(output)])
    assert multilevel == [3000, 3000]  # exact_multilevel's fits only (3,000 < the switch)
    frame = pd.read_csv(output)
    assert list(zip(frame["path"], frame["seed"], strict=True)) == [
        (path, seed) for path in ("exact", "default", "ivf_arpack", "exact_multilevel")
        for seed in (0, 1)]
    assert (frame["ari_vs_exact"] == 1.0).all() and (frame["accuracy_pct"] == 100).all()
    # The target is recorded for the paths that run the IVF: ivf_arpack (default is exact here).
    ivf = frame["path"] == "ivf_arpack"
    assert (frame.loc[ivf, "target_recall"] == bench.IVF().target_recall).all()
    assert bench.neighbours("default", 50_000) == ("auto", bench.IVF().target_recall)
    assert frame.loc[~ivf, "target_recall"].isna().all()
    # --target-recall: the IVF paths aim at it (ivf_arpack's IVF is forced at any N).
    bench.main(["--data", "scale", "--n", "3000", "--seeds", "0", "--target-recall", "0.99",
                "--output", str(output)])
    frame = pd.read_csv(output).set_index("path")
    assert frame.loc["ivf_arpack", "target_recall"] == 0.99
    assert frame.loc["default", "neighbours"] == "exact"  # below the switch



def test_bench_ivf_share_times_every_nprobe_against_the_exact_search(tmp_path):
    pd = pytest.importorskip("pandas")
    output = tmp_path / "bench_ivf_share.csv"
    _load("bench_ivf_share").main(["--n", "3000", "--nprobe", "1", "100", "--output",
                                   str(output)])
    frame = pd.read_csv(output)
    assert list(frame["nprobe"]) == [1, 100] and (frame["nlist"] == 76).all()
    # 100 probes of 76 lists: every list, the exact neighbours; one list misses many.
    assert list(frame["share"]) == [1 / 76, 1.0]
    assert frame["recall"].iloc[1] == 1.0 and frame["recall"].iloc[0] < 0.9
    assert (frame["time_exact_s"] > 0).all()
    assert np.allclose(frame["ratio_to_exact"], frame["time_ivf_s"] / frame["time_exact_s"])


def test_bench_recall_agreement_rows_and_choice(tmp_path):
    pd = pytest.importorskip("pandas")
    bench = _load("bench_recall_agreement")
    output = tmp_path / "bench_recall_agreement.csv"
    bench.main(["--data", "digits", "--nprobe", "1", "46", "--seeds", "0", "--output",
                str(output)])
    frame = pd.read_csv(output)
    assert list(frame["nprobe"]) == [1, 46] and (frame["nlist"] == 46).all()
    # Every list probed is the exact search: the exact labels; one list is far from it.
    assert frame["recall"].iloc[1] == 1.0 and frame["ari_vs_exact"].iloc[1] == 1.0
    assert frame["recall"].iloc[0] < 0.9 and frame["ari_vs_exact"].iloc[0] < 0.95
    # The choice: the smallest nprobe whose worst seed reaches the target, else none.
    rows = pd.DataFrame({"data": ["a"] * 4 + ["b"] * 2, "nprobe": [2, 2, 4, 4, 2, 2],
                         "recall": [0.9, 0.9, 0.99, 0.97, 0.8, 0.8],
                         "ari_vs_exact": [0.99, 0.90, 0.96, 0.95, 0.5, 0.99]})
    chosen = bench.smallest_agreeing(rows).set_index("data")
    assert chosen.loc["a", "nprobe"] == 4 and chosen.loc["a", "recall_mean"] == 0.98
    assert np.isnan(chosen.loc["b", "nprobe"])

@pytest.mark.e2e
def test_bench_distributed_sets_each_fit_beside_the_single_machines(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("distributed")
    output = tmp_path / "distributed.csv"
    _load("bench_distributed").main(["--n", "3000", "--workers", "1", "--setting", "paper",
                                     "generic", "--output", str(output)])
    frame = pd.read_csv(output)
    assert list(zip(frame.setting, frame.workers, strict=True)) == [("paper", 0), ("paper", 1),
                                                       ("generic", 0), ("generic", 1)]
    spread = frame[frame.workers == 1]
    assert (spread.time_ratio_to_single > 0).all() and spread.ari_vs_single.between(-1, 1).all()
    assert frame.error_pct.between(0, 100).all()
    # 3,000 points fit in every worker: the rows were replicated, none split by list.
    assert (spread["join"] == "replicated").all() and (spread.shuffle_replicas_bytes == 0).all()
    assert spread.shuffle_rows_by_list_bytes.isna().all()


def test_profile_distributed_adds_each_workers_compute_by_task_prefix():
    profile = _load("profile_distributed")
    stream = [
        {"key": "join_partition-ab12", "worker": "w1", "startstops": [
            {"action": "transfer", "start": 0.0, "stop": 5.0},
            {"action": "compute", "start": 10.0, "stop": 12.5}]},
        {"key": ("solve_block-cd34", 0), "worker": "w1", "startstops": [
            {"action": "compute", "start": 13.0, "stop": 14.0}]},
        {"key": "join_partition-ef56", "worker": "w1", "startstops": [
            {"action": "compute", "start": 15.0, "stop": 15.5}]},
        # A task submitted with pure=False: its key ends in a uuid.
        {"key": "Replica-81f16a49-79b8-4a57-aaa9-0123456789ab", "worker": "w2", "startstops": [
            {"action": "compute", "start": 16.0, "stop": 17.0}]},
    ]
    busy, intervals = profile.busy_seconds(stream)
    assert busy == {("w1", "join_partition"): (3.0, 2), ("w1", "solve_block"): (1.0, 1),
                    ("w2", "Replica"): (1.0, 1)}
    assert [i[:3] for i in intervals] == [(10.0, 12.5, "join_partition"),
                                          (13.0, 14.0, "solve_block"),
                                          (15.0, 15.5, "join_partition"),
                                          (16.0, 17.0, "Replica")]


@pytest.mark.e2e
@pytest.mark.parametrize(("join", "task"), [("auto", "replica_sample"),
                                           ("partitioned", "join_partition")])
def test_profile_distributed_prints_stages_and_tasks(capsys, join, task):
    pytest.importorskip("distributed")
    from kssc.distributed import _neighbors

    share = _neighbors._REPLICA_SHARE
    # 30,000 points: the IVF runs (25 of 346 lists hold 0.99 of the sampled neighbours);
    # below about 20,000 the search is exact, and no join task would show.
    _load("profile_distributed").main(["--n", "30000", "--workers", "1", "--longer", "0",
                                       "--join", join])
    out = capsys.readouterr().out
    assert "stages: neighbours" in out and f" {task} " in out and "solve_block" in out
    assert ("join_partition" in out) == (join == "partitioned")
    assert share == _neighbors._REPLICA_SHARE  # the split join forced for this fit only


def test_bench_allocator_times_each_setting_in_its_own_process(capsys, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    _load("bench_allocator").main(["--n", "2000"])
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0].strip() for line in lines] == ["plain", "dask", "dask, fit"]
    assert all(float(line.split(" in ")[1].split()[0]) >= 0 for line in lines)


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


@pytest.mark.e2e  # a benchmark run end to end (31 s)
def test_bench_memory_reports_every_step_and_restores_the_package(capsys):
    # A small fit through the traced wrappers: every step prints a line, the outer steps'
    # peaks are at least their inner steps', and the package's functions are put back.
    import kssc._base as base
    import kssc.spectral._multilevel as multilevel
    import kssc.spectral.affinity as affinity

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


def test_bench_memory_rss_compares_every_stage_with_the_estimate(tmp_path, capsys):
    # A small fit: one row per stage with the estimate the fit checked and the measured
    # peak, the CSV written where asked, the package's functions put back.
    import kssc._base as base
    import kssc.estimator as estimator

    before = (base.timed, estimator.check_fit_memory)
    frame = _load("bench_memory").main(["--n", "3000", "--rss",
                                        "--output", str(tmp_path / "memory.csv")])
    assert list(frame.stage) == ["unit rows", "neighbours", "coefficients", "spectral"]
    assert (frame.estimate_bytes > 0).all() and (frame.measured_bytes >= 0).all()
    assert frame.loc[0, "estimate_bytes"] == 3000 * 64 * 4  # the float32 unit rows
    assert (tmp_path / "memory.csv").is_file() and "ratio" in capsys.readouterr().out
    assert (base.timed, estimator.check_fit_memory) == before


def _write_idx(path, array):
    import gzip

    header = bytes([0, 0, 8, array.ndim]) + b"".join(
        int(n).to_bytes(4, "big") for n in array.shape)
    with gzip.open(path, "wb") as handle:
        handle.write(header + array.astype(np.uint8).tobytes())


def test_heldout_reads_idx_files_and_refuses_bad_ones(tmp_path):
    heldout = _load("bench_heldout")
    array = np.arange(12).reshape(3, 2, 2)
    _write_idx(tmp_path / "a.gz", array)
    np.testing.assert_array_equal(heldout.read_idx(tmp_path / "a.gz"), array)
    _write_idx(tmp_path / "short.gz", np.arange(10))
    data = (tmp_path / "short.gz").read_bytes()
    import gzip

    (tmp_path / "cut.gz").write_bytes(gzip.compress(gzip.decompress(data)[:-1]))
    with pytest.raises(ValueError, match="9 bytes of data for the stated shape"):
        heldout.read_idx(tmp_path / "cut.gz")
    (tmp_path / "text.gz").write_bytes(gzip.compress(b"not an idx file"))
    with pytest.raises(ValueError, match="not an IDX file"):
        heldout.read_idx(tmp_path / "text.gz")
    with pytest.raises(FileNotFoundError, match="t10k-images-idx3-ubyte.gz"):
        heldout.load(tmp_path / "absent", None)


def test_heldout_reads_all_70000_images_training_first_and_checks_counts(tmp_path):
    heldout = _load("bench_heldout")
    for name, count, value in (("train", 60_000, 0), ("t10k", 10_000, 255)):
        _write_idx(tmp_path / f"{name}-images-idx3-ubyte.gz",
                   np.full((count, 28, 28), value, dtype=np.uint8))
        _write_idx(tmp_path / f"{name}-labels-idx1-ubyte.gz", np.arange(count) % 10)
    X, y = heldout.load_every_image(tmp_path)
    assert X.shape == (70_000, 784) and y.shape == (70_000,)
    assert (X[:60_000] == 0).all() and (X[60_000:] == 1).all()
    np.testing.assert_array_equal(y, np.concatenate([np.arange(60_000), np.arange(10_000)]) % 10)
    _write_idx(tmp_path / "train-labels-idx1-ubyte.gz", np.arange(59_999) % 10)
    with pytest.raises(ValueError, match="expected 60,000 images of 28 x 28 in train-images"):
        heldout.load_every_image(tmp_path)


@pytest.mark.e2e
def test_heldout_fits_every_method_on_a_draw_and_writes_its_csv(tmp_path, monkeypatch):
    pd = pytest.importorskip("pandas")
    heldout = _load("bench_heldout")
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(10), 1000)
    _write_idx(tmp_path / "t10k-images-idx3-ubyte.gz",
               rng.integers(0, 256, (10_000, 28, 28)) * (labels[:, None, None] % 2))
    _write_idx(tmp_path / "t10k-labels-idx1-ubyte.gz", labels)
    X, y = heldout.load(tmp_path, 150)
    assert X.shape == (150, 784) and X.max() <= 1.0 and len(np.unique(y)) == 10
    monkeypatch.setenv("KSSC_PEER_DIR", str(tmp_path / "absent"))
    output = tmp_path / "heldout.csv"
    heldout.main(["--data", str(tmp_path), "--n", "150", "--output", str(output)])
    frame = pd.read_csv(output)
    assert list(frame.method) == ["kssc_auto", "kssc", "kmeans"]
    assert frame.accuracy_pct.between(0, 100).all() and (frame.n_samples == 150).all()
    assert frame.chosen[0] in ("generic", "faces", "motion")
    assert output.with_suffix(".meta.json").is_file()


def test_bench_suitability_reads_both_autokssc_rules_from_one_selection():
    suitability = _load("bench_suitability")
    nan = float("nan")
    selection = {"generic": {"silhouette": 0.4, "n_clusters": 2, "n_clusters_confidence": 0.9},
                 "faces": {"silhouette": 0.7, "n_clusters": 5, "n_clusters_confidence": 0.6},
                 "motion": {"silhouette": nan, "n_clusters": nan,  # failed: left out
                            "n_clusters_confidence": nan}}
    assert suitability.auto_rules(selection) == {"auto_silhouette": (5, 0.6),
                                                 "auto_relative_eigengap": (2, 0.9)}


def test_bench_screen_adopts_a_size_that_keeps_every_choice_and_saves_time():
    import pandas as pd

    screen = _load("bench_screen")
    rows = [  # (family, task, seed, size, chosen, seconds)
        ("yale", "y10", 0, 0, "faces", 5.0), ("yale", "y10", 0, 250, "faces", 6.0),
        ("yale", "y38", 0, 0, "faces", 35.0), ("yale", "y38", 0, 250, "faces", 26.0),
        ("yale", "y38", 0, 500, "faces", 22.0),
        ("yale", "y38", 1, 0, "faces", 35.0), ("yale", "y38", 1, 250, "generic", 10.0),
        ("yale", "y38", 1, 500, "faces", 22.0),
        ("digits", "d", 0, 0, "generic", 1.5), ("digits", "d", 0, 250, "generic", 0.5),
        ("digits", "d", 0, 500, "generic", 0.8)]
    frame = pd.DataFrame([{"family": f, "dataset": t, "source": "all", "seed": seed,
                           "screen_size": size, "chosen": c, "time_s": t_s,
                           "error_pct": 0.0 if c != "generic" or f == "digits" else 50.0}
                          for f, t, seed, size, c, t_s in rows])
    comparison = screen.compare(frame).set_index("screen_size")
    assert comparison.loc[250, "n_screened"] == 4
    assert comparison.loc[250, "n_differ"] == 1  # Yale B 38 at seed 1 kept generic
    assert comparison.loc[250, "error_pct_mean"] == pytest.approx(50.0 / 4)
    assert comparison.loc[500, "n_screened"] == 3 and comparison.loc[500, "n_differ"] == 0
    # 500 does not screen y10 (its full fit's 5 s counts).
    assert comparison.loc[500, "time_s_total"] == pytest.approx(5.0 + 22.0 + 22.0 + 0.8)
    assert screen.choose(frame) == 500  # 49.8 s against 76.5 s: faster by more than 10 %
    assert screen.choose(frame, held_out="yale") == 250  # digits: 0.5 s against 1.5 s
    assert screen.choose(frame[frame.screen_size != 500]) == 0  # 250 changed a choice
    slower = frame.assign(time_s=frame.time_s.where(frame.screen_size == 0, 100.0))
    assert screen.choose(slower) == 0  # every choice kept, but no time saved
