"""experiments/panel.py: the smoke run, the leave-one-family-out choice, and the automatic
rows equal AutoKSSC fitted with the trial's seed."""

import json

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir

from experiments import _fingerprint, panel
from experiments._trial import method_seed
from experiments.run import run
from kssc.auto import AutoKSSC
from support import CONF_DIR, real_data


def test_smoke_run(tmp_path):
    for name in ("yaleb", "hopkins155", "tir"):
        real_data(name)
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=["experiment=panel", "profile=smoke", "n_jobs=1",
                                           f"results_dir={tmp_path}"])
    frame = run(cfg)
    meta = json.loads((tmp_path / "panel.meta.json").read_text())
    assert meta["fingerprint"] == _fingerprint.fingerprint(cfg)
    assert set(frame["method"]) == {*cfg.experiment.presets, *panel.AUTOS}
    assert (~frame["failed"]).all()
    table = pd.read_csv(tmp_path / "panel_table.csv")
    loo = table[table["scope"] == "loo"]
    assert set(loo["dataset"]) == set(frame["dataset"])
    assert (loo["trails_best_pct"] >= 0).all()
    criterion = table[table["scope"] == "loo_criterion"]
    assert set(criterion["chosen"]) <= set(panel.AUTOS)
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


def test_auto_rows_are_autokssc_with_the_trials_seed():
    exp = {"presets": ["generic", "paper", "motion"],
           "auto": {"candidates": ["generic", "motion"], "subspace_dim": 3},
           "synthetic": {"n_subspaces": 3, "subspace_dim": 3, "ambient_dim": 20,
                         "n_per_subspace": 40, "noise": 0.1}}
    panel.check({**exp, "sklearn": []})
    cell = {"family": "synthetic", "dataset": "synthetic", "source": "draw=0"}
    rows = {row["method"]: row for row in panel.trial({"experiment": exp, "data_dir": None},
                                                      cell, 0, 7)}
    X, y = panel.load_task(cell, exp, None, 7)
    for method, criterion in panel.AUTOS.items():
        auto = AutoKSSC(3, candidates=("generic", "motion"), criterion=criterion,
                        subspace_dim=3, random_state=method_seed(7)).fit(X)
        assert rows[method]["chosen"] == auto.best_candidate_
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
