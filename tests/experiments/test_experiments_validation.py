"""Honest selection (issue 11 part 3): Hopkins 155's grouped, stratified folds on the real
sequence list; the out-of-fold choice on hand-made errors whose answer is known; the Yale B
groups' combinations and the choice on the selection group; smoke runs of the new
experiments (hopkins155_cv, yale_grouped, yale38, generic_selection)."""

import itertools
import math
import os
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from experiments import _config, _runner
from experiments.hopkins155_cv import hopkins_folds, select_out_of_fold, video_of
from experiments.yale_grouped import choose_setting, subject_combinations
from kssc.datasets import get_data_dir, list_hopkins_sequences
from kssc.datasets.hopkins import hopkins_metadata

needs_data = pytest.mark.skipif(
    "KSSC_DATA_DIR" not in os.environ and not (get_data_dir() / "hopkins155").exists(),
    reason="data folder not available")


@pytest.fixture
def smoke_run(compose_config):
    """`smoke_run(name, tmp_path)`: run experiment `name` at profile=smoke into tmp_path:
    its rows, its summary table and its config."""

    def run(name, tmp_path):
        cfg = compose_config(f"experiment={name}", "profile=smoke", "n_jobs=1",
                             results_dir=tmp_path)
        frame = _runner.run(cfg)
        return frame, pd.read_csv(tmp_path / f"{name}_table.csv"), cfg

    return run


# --------------------------------------------------------------------------- Hopkins folds

def test_every_video_with_its_subsets_lies_in_one_fold_and_strata_are_dealt_evenly():
    names = list_hopkins_sequences("hopkins155")
    folds = hopkins_folds(names, 5, seed=0)
    assert sorted(folds) == sorted(names) and set(folds.values()) == set(range(5))
    by_video = {}
    for name, fold in folds.items():
        by_video.setdefault(video_of(name), set()).add(fold)
    assert len(by_video) == 50  # 35 videos with 3 motions (4 sequences each) + 15 lone ones
    assert all(len(f) == 1 for f in by_video.values())
    assert {"1R2RC_g12", "1R2RC_g13", "1R2RC_g23"} <= {n for n in names if video_of(n) == "1R2RC"}
    info = hopkins_metadata()
    for category in ("checkerboard", "traffic", "articulated"):
        videos = {video_of(n): folds[n] for n in names if info[n]["category"] == category}
        counts = Counter(videos.values())
        per_fold = [counts.get(f, 0) for f in range(5)]
        assert max(per_fold) - min(per_fold) <= 2, (category, per_fold)  # two strata each
    sizes = Counter(folds.values())
    assert max(sizes.values()) - min(sizes.values()) <= 8
    assert hopkins_folds(names, 5, seed=0) == folds
    assert hopkins_folds(names, 5, seed=1) != folds


def test_folds_refuse_more_folds_than_videos():
    with pytest.raises(ValueError, match="n_folds=5"):
        hopkins_folds(["1R2RC", "1R2RC_g12", "cars1"], 5, seed=0)


def test_out_of_fold_choice_on_hand_made_errors():
    # Setting "a" is best on folds 1 and 2, "b" on fold 0: training on folds {1, 2} picks a,
    # scored on fold 0 with a's (bad) errors there; leaving out fold 1 or 2, b's big win on
    # fold 0 outweighs a's small one on the remaining fold.
    errors = pd.DataFrame({"a": [30.0, 30.0, 0.0, 0.0, 0.0, 0.0],
                           "b": [0.0, 0.0, 1.0, 1.0, 1.0, 1.0]},
                          index=["s0", "s1", "s2", "s3", "s4", "s5"])
    folds = {"s0": 0, "s1": 0, "s2": 1, "s3": 1, "s4": 2, "s5": 2}
    choices, held_out = select_out_of_fold(errors, folds)
    assert choices["chosen"].tolist() == ["a", "b", "b"]
    assert choices["train_error_pct_mean"].tolist() == [0.0, 0.5, 0.5]
    assert held_out.tolist() == [30.0, 30.0, 1.0, 1.0, 1.0, 1.0]
    assert choices[["n_train", "n_test"]].to_numpy().tolist() == [[4, 2]] * 3


def test_a_failed_fit_counts_as_total_error_and_ties_go_to_the_first_setting():
    errors = pd.DataFrame({"a": [np.nan, 0.0], "b": [50.0, 0.0], "c": [50.0, 0.0]},
                          index=["s0", "s1"])
    choices, held_out = select_out_of_fold(errors, {"s0": 0, "s1": 1})
    assert choices["chosen"].tolist() == ["a", "b"]  # fold 1: b and c tie at 50 % on s0
    assert held_out.tolist() == [100.0, 0.0]


# --------------------------------------------------------------------------- Yale B groups

def test_combinations_are_all_or_a_seeded_capped_draw_within_the_group():
    group = list(range(11, 21))
    assert subject_combinations(group, 10, 5, 0, 2) == [tuple(group)]
    assert subject_combinations(group[:8], 10, 5, 0, 4) == []
    drawn = subject_combinations(group, 3, 4, 0, 2)
    every = list(itertools.combinations(group, 3))
    assert len(drawn) == 4 == len(set(drawn)) and set(drawn) <= set(every)
    assert drawn == sorted(drawn, key=every.index)
    assert subject_combinations(group, 3, 4, 0, 2) == drawn
    assert subject_combinations(group, 3, 4, 0, 3) != drawn
    assert len(subject_combinations(group, 2, None, 0, 2)) == math.comb(10, 2)


def test_the_grouped_tasks_of_the_committed_config(compose_config):
    cfg = compose_config("experiment=yale_grouped")
    exp = _config.config_as_dict(cfg)["experiment"]
    tasks = _runner.load("yale_grouped").tasks(exp)
    per_group = Counter(cell["group"] for cell, _ in tasks)
    caps = exp["max_combinations"]
    assert per_group[1] == per_group[2] == per_group[3] == sum(caps.values())
    assert per_group[4] == sum(caps.values()) - caps[10]  # 8 subjects: no 10-subject set
    for cell, _ in tasks:
        subjects = [int(s) for s in cell["subjects"].split("-")]
        assert len(subjects) == cell["n_subjects"]
        assert set(subjects) <= set(exp["groups"][cell["group"] - 1])


def test_the_setting_is_chosen_on_the_selection_group_with_every_n_weighed_equally():
    # On group 1, "a" wins at n = 2 by a little on many draws and loses at n = 10 by a lot
    # on one: with every n weighed equally "b" wins; "a" would win averaging the draws.
    rows = [{"group": 1, "n_subjects": 2, "method": "a", "error_pct": 0.0}] * 9
    rows += [{"group": 1, "n_subjects": 2, "method": "b", "error_pct": 2.0}] * 9
    rows += [{"group": 1, "n_subjects": 10, "method": "a", "error_pct": 20.0},
             {"group": 1, "n_subjects": 10, "method": "b", "error_pct": 10.0},
             {"group": 2, "n_subjects": 2, "method": "a", "error_pct": 0.0},
             {"group": 2, "n_subjects": 2, "method": "b", "error_pct": 90.0}]
    chosen, means = choose_setting(pd.DataFrame(rows), ["a", "b"], selection_group=1)
    assert chosen == "b" and means.to_dict() == {"a": 10.0, "b": 6.0}


# --------------------------------------------------------------------------- smoke runs

@pytest.mark.e2e
@needs_data
def test_hopkins155_cv_smoke(tmp_path, smoke_run):
    frame, table, cfg = smoke_run("hopkins155_cv", tmp_path)
    exp = cfg.experiment
    assert set(frame["method"]) == {*exp.grid, *exp.compare}
    assert not frame["failed"].any(), frame["failure"].tolist()
    folds = table[table["scope"].str.startswith("fold")]
    assert len(folds) == exp.n_folds and set(folds["chosen"]) <= set(exp.grid)
    everything = table[table["scope"] == "all"].set_index("method")
    assert everything.loc["kssc_cv", "n_sequences"] == len(exp.sequences)
    # The out-of-fold mean is the sequence-weighted mean of the folds' held-out means.
    weighted = (folds["error_pct_mean"] * folds["n_sequences"]).sum() / folds["n_sequences"].sum()
    assert everything.loc["kssc_cv", "error_pct_mean"] == pytest.approx(weighted)
    assert {"ssc_tuned", "kssc_generic", *exp.grid} <= set(everything.index)


@pytest.mark.e2e
@needs_data
def test_yale_grouped_scores_the_chosen_setting_on_the_other_groups_only(tmp_path, smoke_run):
    frame, table, cfg = smoke_run("yale_grouped", tmp_path)
    assert not frame["failed"].any(), frame["failure"].tolist()
    chosen = table.loc[table["method"] == "kssc_selected", "chosen"].unique()
    assert len(chosen) == 1 and chosen[0] in cfg.experiment.grid
    scored = table[(table["scope"] == "scored groups")].set_index("method")
    mine = frame[(frame["group"] != 1) & (frame["method"] == chosen[0])]
    assert scored.loc["kssc_selected", "error_pct_mean"] == pytest.approx(mine["error_pct"].mean())
    assert scored.loc["kssc_selected", "n_groups"] == 1


@pytest.mark.e2e
@needs_data
def test_yale38_smoke(tmp_path, smoke_run):
    frame, table, cfg = smoke_run("yale38", tmp_path)
    assert set(table["method"]) == set(cfg.methods)
    assert np.allclose(frame["accuracy_pct"], 100 - frame["error_pct"])


@pytest.mark.e2e
def test_generic_selection_marks_the_lowest_mean_over_the_unions(tmp_path, smoke_run):
    _, table, _ = smoke_run("generic_selection", tmp_path)
    overall = table[table["union"] == "all"].set_index("method")
    assert overall["chosen"].sum() == 1
    assert overall["error_pct_mean"].idxmin() == overall.index[overall["chosen"]][0]
    per_union = table[table["union"] != "all"].groupby("method")["error_pct_mean"].mean()
    assert np.allclose(overall["error_pct_mean"], per_union.reindex(overall.index))
