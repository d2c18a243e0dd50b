"""The scale experiment: the smoke run writes its documented columns (each fit in its own
process), bad values are refused before anything runs, a failing fit process is a failed row,
and the suite's fingerprint covers the code the fit process runs."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf

from experiments import _fingerprint, _runner, plot, report, scale, suite
from experiments._checkout import REPO_ROOT
from experiments.publish import feeds
from kssc.datasets import make_union_of_subspaces

STAGE_COLUMNS = [f"time_{stage}_s" for stage in scale.STAGES]
RSS_COLUMNS = [f"rss_{stage}_gib" for stage in scale.STAGES] + ["rss_peak_gib"]
COLUMNS = ["experiment", "method", "trial", "seed", "error_pct", "failed", "time_representation_s",
           "time_fit_s", "failure", "warnings", "n_samples", *STAGE_COLUMNS, "ambient_dim",
           *RSS_COLUMNS, "load_average"]


@pytest.fixture(scope="module")
def scale_config(compose_config):
    """`scale_config(*overrides, results_dir=None)`: the scale experiment's config."""
    return lambda *overrides, results_dir=None: compose_config(
        "experiment=scale", *overrides, results_dir=results_dir)


@pytest.fixture(scope="module")
def smoke(tmp_path_factory, scale_config):
    results = tmp_path_factory.mktemp("scale") / "results"
    _runner.run(scale_config("profile=smoke", results_dir=results))
    return results


@pytest.mark.e2e
def test_smoke_run_writes_the_documented_columns(smoke):
    frame = pd.read_csv(smoke / "scale.csv")
    assert list(frame.columns) == COLUMNS
    # The paper's setting and KSSC's defaults, each at every N.
    assert {method: rows["n_samples"].tolist() for method, rows in frame.groupby("method")} \
        == {"kssc": [2000, 5000], "kssc_generic": [2000, 5000]}
    assert not frame["failed"].any(), frame["failure"].tolist()
    assert (frame[["time_representation_s", "time_fit_s", *STAGE_COLUMNS]] > 0).all().all()
    assert (frame["time_fit_s"] >= frame[STAGE_COLUMNS].sum(axis=1)).all()
    assert (frame[RSS_COLUMNS] > 0).all().all()
    assert (frame["rss_peak_gib"] >= 0.95 * frame[RSS_COLUMNS[:-1]].max(axis=1)).all()
    assert frame["error_pct"].between(0, 5).all()
    assert (frame["ambient_dim"] == 64).all() and (frame["load_average"] >= 0).all()
    assert frame["seed"].nunique() == 2
    meta = json.loads((smoke / "scale.meta.json").read_text())
    assert meta["config"]["experiment"]["n_samples"] == [2000, 5000]
    assert meta["n_jobs"] == 1
    assert not (smoke / ".partial" / "scale.jsonl").exists()


@pytest.mark.e2e
def test_figure_and_report_from_the_csv(smoke, tmp_path):
    drawn = plot.plot_all(smoke, tmp_path, only=["scale"])
    assert (tmp_path / "scale.png").stat().st_size > 0 and (tmp_path / "scale.pdf").exists()
    assert set(drawn) == {"scale"}
    declared = dict(feeds.declared())["scale"]
    text = "\n".join(report.section(smoke, "scale", declared))
    assert "| 2000 |" in text and "| 5000 |" in text and "log-log slope" in text


@pytest.mark.parametrize("override, message", [
    ("experiment.n_samples=[-5]", "experiment.n_samples must be a non-empty list of integers"),
    ("experiment.n_samples=[]", "experiment.n_samples"),
    ("experiment.n_samples=[5]", r"n_subspaces \(10\)"),
    ("experiment.ambient_dim=8", r"ambient_dim must be an integer >= the largest subspace dim"),
    ("experiment.subspace_dims=[0]", "subspace_dims"),
    ("experiment.noise=-0.1", "experiment.noise"),
    ("experiment.rss_interval=0", "rss_interval"),
    ("experiment.n_jobs=2", "n_jobs must be 1"),
])
def test_bad_config_values_raise_clear_errors(override, message, tmp_path, scale_config):
    with pytest.raises(ValueError, match=message):
        _runner.run(scale_config("profile=smoke", override, results_dir=tmp_path / "results"))
    assert not (tmp_path / "results").exists()


def test_a_failing_fit_process_is_a_failed_row(scale_config):
    exp = OmegaConf.to_container(scale_config("profile=smoke").experiment)
    del exp["noise"]  # the fit process fails with KeyError before fitting
    row = scale.fit_in_subprocess(exp, "kssc", {"_target_": "kssc.KSSC"}, 100, seed=0)
    assert row["failed"] and np.isnan(row["error_pct"]) and row["method"] == "kssc"
    assert "exited with code 1" in row["failure"] and "KeyError" in row["failure"]


def test_fingerprint_covers_the_fit_process():
    sources = set(_fingerprint.result_sources("scale"))
    fit_process = REPO_ROOT / (scale.MODULE.replace(".", "/") + ".py")
    assert {fit_process, REPO_ROOT / "experiments" / "_runner.py",
            REPO_ROOT / "kssc" / "estimator.py"} <= sources
    assert "plot.py" not in {path.name for path in sources}
    assert suite.in_suite("scale")


def test_union_of_subspaces_has_the_given_dimensions():
    X, y = make_union_of_subspaces(203, ambient_dim=12, n_subspaces=4,
                                         subspace_dims=[2, 3, 5], noise=0.0, random_state=0)
    assert X.shape == (203, 12) and np.bincount(y).tolist() == [51, 51, 51, 50]
    assert np.allclose(np.linalg.norm(X, axis=1), 1)
    assert [np.linalg.matrix_rank(X[y == j], tol=1e-8) for j in range(4)] == [2, 3, 5, 2]


def test_rss_peak_of_a_window_shorter_than_the_sampling_interval():
    sampler = scale.RSSSampler(interval=1.0)
    sampler.samples = [(0.0, 10), (1.0, 30), (2.0, 20)]
    assert sampler.peak(0.5, 2.5) == 30
    assert sampler.peak(1.2, 1.4) == 30  # no sample inside: the RSS it started with
    assert np.isnan(sampler.peak(1.0, float("nan")))


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="VmHWM is Linux only")
def test_peak_rss_of_a_child_process_excludes_its_parents_memory():
    # ru_maxrss would report the parent's 1.2 GB in the child; VmHWM is the child's own
    # (importing kssc with its compiled kernels takes about 350 MB).
    import subprocess
    import sys

    ballast = np.ones(150_000_000)      # 1.2 GB resident in this (parent) process
    code = "from experiments.scale import peak_rss_bytes; print(peak_rss_bytes())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=REPO_ROOT)
    assert int(out.stdout) < 0.5 * ballast.nbytes


def test_union_npy_is_written_in_chunks_with_the_given_dimensions(tmp_path):
    y = scale.write_union_npy(tmp_path / "X.npy", 203, ambient_dim=12, n_subspaces=4,
                              subspace_dims=[2, 3, 5], noise=0.0, random_state=0, chunk_rows=50)
    X = np.load(tmp_path / "X.npy", mmap_mode="r")
    assert X.shape == (203, 12) and X.dtype == np.float32
    assert np.bincount(y).tolist() == [51, 51, 51, 50]
    assert np.allclose(np.linalg.norm(X, axis=1), 1, atol=1e-6)
    assert [np.linalg.matrix_rank(X[y == j], tol=1e-4) for j in range(4)] == [2, 3, 5, 2]


def test_large_cells_fit_a_memory_mapped_file_and_remove_it(scale_config):
    exp = OmegaConf.to_container(scale_config("profile=smoke").experiment)
    exp["memmap_from"] = 2000
    row = scale.fit_here(exp, {"kssc": {"_target_": "kssc.KSSC"}}, 2000, seed=0)
    assert not row["failed"], row["failure"]
    assert row["error_pct"] <= 5
    assert not list((REPO_ROOT / "data" / "temp").glob("scale_2000_0_*.npy"))


def test_paper_profile_adds_the_memory_mapped_ten_million_cell(scale_config):
    exp = scale_config("profile=paper").experiment
    assert 10**7 in exp.n_samples and exp.memmap_from <= 10**7
    assert 10**7 not in scale_config().experiment.n_samples
