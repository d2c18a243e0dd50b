"""The cross-check's inputs, its sidecar and its staleness rule (pure Python, no Octave)."""

import json

import numpy as np
import pandas as pd
import pytest

from crosscheck import sidecar
from crosscheck.inputs import INPUTS, SETTINGS, make_input
from crosscheck.run import Z_METHODS, main, paper_method
from experiments import _executed
from kssc.baselines import SSC
from kssc.metrics import clustering_error


@pytest.mark.parametrize("name", ["clean", "noisy", "intersecting"])
def test_synthetic_inputs_are_unit_points_with_their_labels(name):
    spec = INPUTS[name]
    X, y = make_input(spec, seed=0)
    n_groups = spec.get("n_subspaces", 2)
    assert X.shape == (n_groups * spec["n_per_subspace"], spec["ambient_dim"])
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    assert np.bincount(y).tolist() == [spec["n_per_subspace"]] * n_groups


def test_intersecting_input_shares_t_dimensions():
    spec = INPUTS["intersecting"]
    X, y = make_input(spec, seed=0)
    # Each subspace's points span subspace_dim dimensions; together d + d - t.
    ranks = [np.linalg.matrix_rank(X[y == g], tol=1e-8) for g in (0, 1)]
    assert ranks == [spec["subspace_dim"]] * 2
    assert np.linalg.matrix_rank(X, tol=1e-8) == 2 * spec["subspace_dim"] - spec["t"]


def test_noisy_input_is_hard_where_the_clean_one_is_not():
    """The point of the hard inputs: errors that are not 0 % (SSC as the probe)."""
    errors = {}
    for name in ("clean", "noisy"):
        X, y = make_input(INPUTS[name], seed=0)
        labels = SSC(3, lam=SETTINGS["lambda"], column_wise=True, random_state=0).fit(X).labels_
        errors[name] = clustering_error(y, labels)
    assert errors["clean"] == 0.0
    assert errors["noisy"] > 5.0


@pytest.mark.parametrize("name, data_set", [("tir", "tir"), ("hopkins", "hopkins155")])
def test_real_inputs_load_through_the_packages_loaders(name, data_set, real_data):
    data_dir = real_data(data_set)
    X, y = make_input(INPUTS[name], seed=0, data_dir=data_dir)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    assert y.min() == 0 and len(np.unique(y)) >= 2 and len(y) == len(X)


def test_unknown_input_kind_is_named():
    with pytest.raises(ValueError, match="unknown input kind 'faces'"):
        make_input({"kind": "faces"})


def test_there_are_four_hard_inputs_of_each_kind():
    kinds = [spec["kind"] for name, spec in INPUTS.items() if name != "clean"]
    assert sorted(kinds) == ["hopkins", "intersection", "subspaces", "tir"]


def test_our_side_is_built_from_the_method_configs_the_digest_covers():
    settings = {**SETTINGS, "n_clusters": 3}
    used = set()
    for _, _, make, _ in Z_METHODS.values():
        model = make(settings)
        assert model.n_clusters == 3 and model.random_state == SETTINGS["seed"]
        used.add(type(model).__name__)
    assert used == {"KSSC", "SSC", "GFS", "GSC", "TSC"}
    gfs = paper_method("gfs", settings, k_max=6)
    assert (gfs.affinity, gfs.k_max) == ("binary", 6)  # the authors' binary Z, not our default


@pytest.fixture
def committed(tmp_path):
    """A results folder with a CSV and its sidecar, as `python -m crosscheck` leaves them."""
    csv = tmp_path / "crosscheck.csv"
    pd.DataFrame({"input": ["noisy"], "method": ["SSC relaxed"], "max_abs_dZ": [1e-14]}).to_csv(
        csv, index=False)
    config = sidecar.crosscheck_config(SETTINGS, INPUTS)
    with _executed.tracing():  # as `python -m crosscheck` runs: its record is the run's
        clustering_error([0, 1, 1], [1, 0, 0])
        sidecar.write_sidecar(csv, config, started="2026-01-01T00:00:00+00:00", wall_time=1.0)
    return csv, config


def forge_solver_change(csv):
    """The sidecar as if a function the run executed had another source now."""
    path = sidecar.sidecar_path(csv)
    meta = json.loads(path.read_text())
    meta["executed"]["functions"]["kssc.metrics:clustering_error"] = "0" * 16
    path.write_text(json.dumps(meta))


def test_sidecar_binds_the_csv_and_records_the_fingerprint(committed):
    csv, config = committed
    meta = sidecar._io.read_meta(csv.parent, "crosscheck")
    assert meta["files"] == {"crosscheck.csv": sidecar._io.sha256_file(csv)}
    assert meta["fingerprint"] == sidecar.fingerprint(config)
    assert meta["config"]["experiment"]["inputs"]["hopkins"]["sequence"] == "cars2_06"
    assert {"git_revision", "packages", "wall_time_s", "started"} <= meta.keys()
    assert sidecar.staleness(csv, config) is None
    assert sidecar.is_current(csv.parent)


def test_stale_when_the_solvers_change(committed):
    csv, config = committed
    assert "kssc.metrics:clustering_error" in json.loads(
        sidecar.sidecar_path(csv).read_text())["executed"]["functions"]
    forge_solver_change(csv)
    assert "function kssc.metrics:clustering_error changed" in sidecar.staleness(csv, config)
    assert not sidecar.is_current(csv.parent)


def test_stale_when_the_csv_settings_or_sidecar_change(committed):
    csv, config = committed
    other = sidecar.crosscheck_config({**SETTINGS, "kssc_k": 9}, INPUTS)
    assert "settings or inputs differ" in sidecar.staleness(csv, other)
    csv.write_text(csv.read_text() + "noisy,GFS,0.5\n")
    assert "CSV differs" in sidecar.staleness(csv, config)
    sidecar.sidecar_path(csv).unlink()
    assert sidecar.staleness(csv, config) == "no sidecar"
    assert sidecar.staleness(csv.with_name("none.csv"), config) == "no CSV"


def test_check_flag_exits_1_when_stale_and_0_when_current(committed, monkeypatch, capsys):
    csv, _ = committed
    monkeypatch.setenv("KSSC_OCTAVE", "")  # --check needs no Octave
    assert main(["--check", "--output", str(csv)]) == 0
    assert "current" in capsys.readouterr().out
    forge_solver_change(csv)
    assert main(["--check", "--output", str(csv)]) == 1
    assert "stale (function kssc.metrics:clustering_error changed" in capsys.readouterr().out
