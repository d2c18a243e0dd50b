"""What the runner refuses before the first trial and what it records (issue 29.2, 29.4,
29.5): a command-line seed never overwrites the trials' seeds, columns never overwrite result
columns, a non-integer seed is refused, every method's parameters are tried on the smallest
data set it gets before any other trial, and the warnings of each fit are a column."""

import warnings

import numpy as np
import pytest

from experiments import _config, _fingerprint, _trial
from experiments.run import override_columns


@pytest.fixture
def kssc_config(compose_config):
    """`kssc_config(tmp_path, *overrides)`: synthetic_intersection's smoke config with k-SSC
    only, writing into tmp_path/results."""

    def config(tmp_path, *overrides):
        return compose_config("experiment=synthetic_intersection", "profile=smoke", "n_jobs=1",
                              "~methods.ssc", *overrides, results_dir=tmp_path / "results")

    return config


def test_seed_on_the_command_line_keeps_every_trials_seed(tmp_path, toy_config, run_toy, toy):
    # seed=5 became a column `seed` overwriting the 6 trial seeds with 5: one unique seed,
    # and every bootstrap interval (resampled by seed) NaN.
    cfg = toy_config(tmp_path, "seed=5")
    cfg.columns = override_columns(cfg, ["seed=5", "n_jobs=1"])
    assert cfg.columns == {"config_seed": 5}
    frame = run_toy(cfg)
    assert frame["seed"].nunique() == len(toy.toy_tasks()) == 6
    assert (frame["config_seed"] == 5).all()
    table = _trial.summarise_by("value")(frame)
    assert table[["error_pct_ci_low", "error_pct_ci_high"]].notna().all().all()


@pytest.mark.parametrize("column", ["seed", "trial", "value", "cell_value"],
                         ids=["row column", "trial", "cell value", "trial field"])
def test_columns_that_would_overwrite_results_are_refused(tmp_path, column, toy_config, run_toy):
    cfg = toy_config(tmp_path)
    cfg.columns = {column: 5}
    with pytest.raises(ValueError, match=rf"columns \['{column}'\] would overwrite"):
        run_toy(cfg)
    assert not (tmp_path / "results" / "synthetic_intersection.csv").exists()


@pytest.mark.parametrize("seed", ["1.5", "-1", "true", "abc"])
def test_a_seed_that_is_not_a_non_negative_integer_is_refused(seed, compose_config):
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        _config.check_config(compose_config("experiment=tir", f"seed={seed}"))


def sized_trial(context, cell, trial, seed):
    rng = np.random.default_rng(_trial.data_seed(seed))
    y = np.repeat([0, 1], cell["n"] // 2)
    X = rng.standard_normal((cell["n"], 4)) + 10 * y[:, None]
    return _trial.fit_methods(context, X, y, seed)


def sized_tasks(exp=None, data_dir=None):
    return [({"n": n}, t) for t in range(2) for n in (60, 40, 24, 50)]


SIZED = _trial.Experiment(tasks=sized_tasks, trial=sized_trial)


@pytest.mark.parametrize("override, message", [
    ("methods.kssc.n_neighbors=30", r"n_neighbors=30 must be < n_samples=24"),
    ("methods.kssc.n_neighbors=[0]", r"n_neighbors"),
])
def test_a_value_only_fit_refuses_stops_the_run_before_any_other_trial(tmp_path, override,
                                                                       message, kssc_config,
                                                                       run_toy):
    # Issue 29.4: such a value marked every k-SSC row failed and the run exited 0.
    done = []
    with pytest.raises(ValueError, match=rf"{message}.*cell \{{'n': 24\}}, trial 0"):
        run_toy(kssc_config(tmp_path, override), on_trial=done.append, declared=SIZED)
    assert done == []
    assert not (tmp_path / "results" / "synthetic_intersection.csv").exists()


def test_the_preflight_task_is_kept_and_not_run_twice(tmp_path, monkeypatch, kssc_config,
                                                      run_toy):
    fits = []
    original = _trial._fit
    monkeypatch.setattr(_trial, "_fit", lambda *a, **k: fits.append(len(a[2])) or original(*a, **k))
    frame = run_toy(kssc_config(tmp_path, "methods.kssc.n_neighbors=5"), declared=SIZED)
    assert len(frame) == len(fits) == len(sized_tasks())
    assert fits[0] == 24  # the smallest cell first
    assert sorted(fits) == sorted(cell["n"] for cell, _ in sized_tasks())


def test_the_warnings_of_each_fit_are_a_column(tmp_path, kssc_config, run_toy):
    # lam = 5 >= lambda_max: all-zero codes, a 50 % error fit that used to look normal.
    frame = run_toy(kssc_config(tmp_path, "methods.kssc.lam=5", "methods.kssc.lam_mode=absolute",
                                "methods.kssc.n_neighbors=5"), declared=SIZED)
    assert frame["warnings"].str.contains("DegenerateFitWarning: the representation has no "
                                          "non-zero coefficient").all()
    quiet = run_toy(kssc_config(tmp_path / "quiet", "methods.kssc.n_neighbors=5"),
                    declared=SIZED)
    assert quiet["warnings"].dtype == frame["warnings"].dtype
    assert not quiet["warnings"].str.contains("DegenerateFitWarning").any()


def test_warning_summary_keeps_category_and_first_line_once():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            warnings.warn("first line\nmore detail", UserWarning, stacklevel=1)
        warnings.warn("other", DeprecationWarning, stacklevel=1)
    assert _trial.warning_summary(caught) == "UserWarning: first line | DeprecationWarning: other"
    assert _trial.warning_summary([]) == ""


def test_summary_of_committed_rows_without_a_warnings_column(tmp_path, toy_config, run_toy):
    # Committed CSVs predate the column: the summary must not need it.
    frame = run_toy(toy_config(tmp_path)).drop(columns="warnings")
    table = _trial.summarise_by("value")(frame)
    assert len(table) == 3


@pytest.fixture
def interrupted(run_toy):
    """`interrupted(cfg)`: run `cfg` with the toy experiment, killed after two trials."""

    def run_killed(cfg):
        def kill_after_two(done):
            if done == 2:
                raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            run_toy(cfg, on_trial=kill_after_two)

    return run_killed


@pytest.mark.parametrize("change, says", [
    ("code", "the code changed"), ("config", "the config changed"), ("restart", "restart=true")])
def test_a_discarded_checkpoint_says_why(tmp_path, monkeypatch, capsys, change, says,
                                         interrupted, toy_config, run_toy):
    # Issue 29.7: "resumed 0 of 30" with no message when a docstring edit changed the code hash.
    interrupted(toy_config(tmp_path))
    capsys.readouterr()
    overrides = {"config": ["seed=7"], "restart": ["restart=true"]}.get(change, [])
    if change == "code":
        monkeypatch.setattr(_fingerprint, "code_digest", lambda name: "0ther")
    ran = []
    run_toy(toy_config(tmp_path, *overrides), on_trial=ran.append)
    err = capsys.readouterr().err
    assert len(ran) == 6
    assert "discarded the checkpoint of an interrupted run (2 finished task(s))" in err
    assert says in err


def test_a_resumed_checkpoint_says_nothing_about_discarding(tmp_path, capsys, interrupted,
                                                           toy_config, run_toy):
    interrupted(toy_config(tmp_path))
    run_toy(toy_config(tmp_path))
    assert "discarded" not in capsys.readouterr().err
