"""experiments/panel.py: the smoke run, the leave-one-family-out choice, and the automatic
rows equal AutoKSSC fitted with the trial's seed."""

import json

import numpy as np
import pandas as pd
import pytest

from experiments import _fingerprint, panel
from experiments._trial import method_seed
from experiments.run import run
from kssc.auto import CRITERIA, SUBSPACE_CRITERIA, AutoKSSC


@pytest.mark.e2e
def test_smoke_run(tmp_path, real_data, compose_config):
    for name in ("yaleb", "hopkins155", "tir"):
        real_data(name)
    cfg = compose_config("experiment=panel", "profile=smoke", "n_jobs=1", results_dir=tmp_path)
    frame = run(cfg)
    meta = json.loads((tmp_path / "panel.meta.json").read_text())
    assert meta["fingerprint"] == _fingerprint.fingerprint(cfg)
    autos = panel.auto_methods(cfg.experiment)
    assert set(frame["method"]) == {*cfg.experiment.presets, *autos}
    assert (~frame["failed"]).all()
    table = pd.read_csv(tmp_path / "panel_table.csv")
    loo = table[table["scope"] == "loo"]
    assert set(loo["dataset"]) == set(frame["dataset"])
    assert (loo["trails_best_pct"] >= 0).all()
    criterion = table[table["scope"] == "loo_criterion"]
    assert set(criterion["chosen"].dropna()) <= {m for m, (_, d) in autos.items()
                                                 if d == cfg.experiment.auto.subspace_dim}
    pairs = table[table["scope"] == "loo_criterion_dim"].set_index("family")
    assert set(pairs["chosen"].dropna()) <= set(autos)
    assert pairs.loc["all", "error_pct_mean"] == pytest.approx(
        pairs["error_pct_mean"].drop("all").mean())
    means = table[table["scope"] == "family_mean"]
    assert set(means["family"]) == {*frame["family"], "all"}


def _frame(errors):
    """Rows {family: {method: [errors]}} with one dataset per family."""
    rows = [{"family": family, "dataset": family, "method": method, "error_pct": e,
             "failed": False, "time_fit_s": 1.0}
            for family, by_method in errors.items()
            for method, values in by_method.items() for e in values]
    return pd.DataFrame(rows)


def test_leave_one_family_out_never_sees_the_held_out_family():
    # "a" wins on x and y; "b" only on z, by far: held out, z is scored with "a".
    frame = _frame({"x": {"a": [1, 3], "b": [10, 10]}, "y": {"a": [0, 0], "b": [5, 5]},
                    "z": {"a": [90, 90], "b": [0, 0]}})
    chosen = panel.leave_one_family_out(frame, ["a", "b"])
    assert chosen["z"][0] == "a"
    assert chosen["x"][0] == "b" and chosen["x"][1] == {"a": 45.0, "b": 2.5}
    exp = {"presets": ["a", "b"]}
    table = panel.summary(frame.assign(method=frame["method"]), {**exp})
    means = table[table["scope"] == "family_mean"].set_index(["family", "method"])
    assert means.loc[("x", "a"), "error_pct_mean"] == 2.0
    assert means.loc[("all", "b"), "error_pct_mean"] == 5.0
    assert not (table["scope"] == "loo_criterion").any()  # no automatic variant here
    loo = table[table["scope"] == "loo"].set_index("dataset")
    assert loo.loc["z", "chosen"] == "a" and loo.loc["z", "error_pct_mean"] == 90.0
    assert loo.loc["z", "best_method"] == "b" and loo.loc["z", "trails_best_pct"] == 90.0
    assert loo.loc["y", "trails_best_pct"] == 5.0


def test_auto_methods_name_the_default_dimension_first():
    exp = {"auto": {"subspace_dim": 5, "subspace_dims": [3, 5, 12]}}
    methods = panel.auto_methods(exp)
    assert list(methods)[:len(CRITERIA)] == [f"auto_{name}" for name in CRITERIA]
    assert methods["auto_silhouette"] == ("silhouette", 5)
    assert methods["auto_silhouette_d12"] == ("silhouette", 12)
    assert methods["auto_eigengap"] == ("eigengap", 5)
    # No duplicate of the default dimension; the other dimensions only where they matter.
    assert len(methods) == len(CRITERIA) + 2 * len(SUBSPACE_CRITERIA)
    assert "auto_eigengap_d3" not in methods
    assert panel.auto_methods({"presets": ["generic"]}) == {}


def test_loo_criterion_dim_never_sees_the_held_out_family():
    # d5 wins on x and y, d12 only on z, by far. Held out, z is scored with d5 (what x and
    # y prefer), though d12 is best there and best over all three families; held out x or
    # y, z's margin makes d12 the choice, and x (y) is scored with d12's error on it.
    frame = _frame({"x": {"auto_silhouette": [1, 3], "auto_silhouette_d12": [10, 10]},
                    "y": {"auto_silhouette": [0, 0], "auto_silhouette_d12": [5, 5]},
                    "z": {"auto_silhouette": [90, 90], "auto_silhouette_d12": [0, 0]}})
    frame["chosen"] = "faces"
    exp = {"presets": [], "auto": {"subspace_dim": 5, "subspace_dims": [5, 12]}}
    table = panel.summary(frame, exp)
    pairs = table[table["scope"] == "loo_criterion_dim"].set_index("family")
    assert pairs.loc["z", "chosen"] == "auto_silhouette"
    assert pairs.loc["z", "subspace_dim"] == 5 and pairs.loc["z", "error_pct_mean"] == 90.0
    assert pairs.loc["z", "selection_error_pct"] == 2.0 / 2  # mean of x (2) and y (0)
    assert pairs.loc["x", "chosen"] == "auto_silhouette_d12"
    assert pairs.loc["x", "criterion"] == "silhouette" and pairs.loc["x", "subspace_dim"] == 12
    assert pairs.loc["x", "error_pct_mean"] == 10.0 and pairs.loc["y", "error_pct_mean"] == 5.0
    assert pairs.loc["all", "error_pct_mean"] == pytest.approx((10 + 5 + 90) / 3)
    # The criterion alone is chosen at the default dimension only: always auto_silhouette.
    criterion = table[table["scope"] == "loo_criterion"].set_index("family")
    assert set(criterion["chosen"].dropna()) == {"auto_silhouette"}
    means = table[table["scope"] == "family_mean"].set_index(["family", "method"])
    assert means.loc[("all", "auto_silhouette_d12"), "subspace_dim"] == 12
    assert means.loc[("all", "auto_silhouette_d12"), "error_pct_mean"] == 5.0
    # The default setting is chosen among the presets and the default dimension's variants.
    assert set(table.loc[table["scope"] == "loo", "chosen"]) == {"auto_silhouette"}


def test_auto_rows_are_autokssc_with_the_trials_seed():
    exp = {"presets": ["generic", "paper", "motion"],
           "auto": {"candidates": ["generic", "motion"], "subspace_dim": 3,
                    "subspace_dims": [3, 8]},
           "synthetic": {"n_subspaces": 3, "subspace_dim": 3, "ambient_dim": 20,
                         "n_per_subspace": 40, "noise": 0.1}}
    panel.check({**exp, "sklearn": []})
    cell = {"family": "synthetic", "dataset": "synthetic", "source": "draw=0"}
    rows = {row["method"]: row for row in panel.trial({"experiment": exp, "data_dir": None},
                                                      cell, 0, 7)}
    X, y = panel.load_task(cell, exp, None, 7)
    methods = panel.auto_methods(exp)
    assert set(rows) == {*exp["presets"], *methods}
    for method, (criterion, dim) in methods.items():
        auto = AutoKSSC(3, candidates=("generic", "motion"), criterion=criterion,
                        subspace_dim=dim, random_state=method_seed(7)).fit(X)
        assert rows[method]["chosen"] == auto.best_candidate_
        assert rows[method]["subspace_dim"] == dim
        assert rows[method][criterion] == pytest.approx(auto.selection_[auto.best_candidate_]
                                                        [criterion])
        assert rows[method]["error_pct"] == rows[auto.best_candidate_]["error_pct"]
    assert "residual" not in rows["paper"]  # not a candidate: no criteria
    assert np.isfinite(rows["motion"]["silhouette"])


def test_check_names_bad_presets():
    with pytest.raises(ValueError, match=r"presets \['face'\] are not in"):
        panel.check({"presets": ["face"], "auto": {"candidates": []}, "sklearn": []})
    with pytest.raises(ValueError, match="auto.candidates must be among"):
        panel.check({"presets": ["generic"], "auto": {"candidates": ["paper"]}, "sklearn": []})
    with pytest.raises(ValueError, match="subspace_dims must be >= 1"):
        panel.check({"presets": ["generic"], "sklearn": [],
                     "auto": {"candidates": ["generic"], "subspace_dim": 5,
                              "subspace_dims": [0, 5]}})


def test_a_preset_row_records_the_fits_warnings():
    """Three separated lines in the plane asked for 2 clusters: more graph components than
    clusters, which the row must say (docs/reproduction.md: such a split is arbitrary)."""
    rng = np.random.default_rng(0)
    X = np.vstack([np.outer(rng.uniform(1, 2, 20), direction)
                   for direction in ([1.0, 0.0], [0.0, 1.0], [1.0, 1.0])])
    y = np.repeat([0, 1, 1], 20)
    row, _ = panel._fit("paper", X, y, 0)
    assert "connected components" in row["warnings"]
    row, _ = panel._fit("paper", X, np.repeat([0, 1, 2], 20), 0)
    assert "connected components" not in row["warnings"]
