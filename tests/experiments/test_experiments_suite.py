"""`make figures`' driver: runs what is missing or stale, skips what is current, and trusts
a CSV only when its own sidecar vouches for its bytes and carries the fingerprint of the
config the suite would run; a code change is judged by what the result executed
(`_executed`); `--check` also fails a table its rows do not give and rows that are not the
config's grid (issue 37.4)."""

import json
import re
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from experiments import (
    _config,
    _fingerprint,
    _io,
    _runner,
    _staleness,
    suite,
    summarise,
)
from experiments._checkout import REPO_ROOT
from experiments.run import override_columns, run


def suite_args(results, figures):
    return ["--profile", "smoke", "--only", "complexity", "--results", str(results),
            "--figures", str(figures)]


@pytest.mark.e2e
def test_suite_skips_current_results_and_reruns_stale(tmp_path, capsys, monkeypatch):
    results, figures = tmp_path / "results", tmp_path / "figures"
    suite.main(suite_args(results, figures))
    assert (results / "complexity.csv").exists() and (results / "REPORT.md").exists()
    assert any(figures.glob("*.png"))
    first_mtime = (results / "complexity.csv").stat().st_mtime_ns
    capsys.readouterr()

    suite.main(suite_args(results, figures))
    assert "complexity: results current" in capsys.readouterr().out
    assert (results / "complexity.csv").stat().st_mtime_ns == first_mtime

    # Issue 27.7: a change to code the result never ran leaves it current (nothing in its
    # record differs); one to a function it ran is caught (the record's digest stands for
    # the source the run executed).
    meta = json.loads((results / "complexity.meta.json").read_text())
    assert "experiments.complexity:requirements" in meta["executed"]["functions"]
    meta["executed"]["functions"]["experiments.complexity:requirements"] = "0" * 16
    (results / "complexity.meta.json").write_text(json.dumps(meta))
    assert suite.main(["--check", *suite_args(results, figures)]) == 1
    assert "function experiments.complexity:requirements changed" in capsys.readouterr().out
    suite.main(suite_args(results, figures))
    assert "complexity: running" in capsys.readouterr().out
    assert suite.main(["--check", *suite_args(results, figures)]) == 0


@pytest.mark.e2e
def test_a_summary_code_change_rewrites_the_table_without_rerunning(tmp_path, capsys,
                                                                    monkeypatch):
    results, figures = tmp_path / "results", tmp_path / "figures"
    suite.main(suite_args(results, figures))
    first_mtime = (results / "complexity.csv").stat().st_mtime_ns
    declared = _runner.load("complexity")
    summary = declared.summary
    changed = declared.__class__(
        tasks=declared.tasks, trial=declared.trial, compute=declared.compute, check=declared.check,
        summary=lambda frame, exp: summary(frame, exp).assign(extra=1))
    monkeypatch.setattr(_runner, "load", lambda name: changed)
    monkeypatch.setattr(summarise, "load", lambda name: changed)
    # The summary's source changed (what the sidecar's summary record says it ran differs).
    meta = json.loads((results / "complexity.meta.json").read_text())
    meta["summary_executed"]["functions"]["experiments.complexity:summary"] = "0" * 16
    (results / "complexity.meta.json").write_text(json.dumps(meta))
    capsys.readouterr()
    assert suite.main(["--check", *suite_args(results, figures)]) == 1
    assert "complexity: the summary table is not what its rows give" in capsys.readouterr().out
    suite.main(suite_args(results, figures))
    out = capsys.readouterr().out
    assert "summary table rewritten" in out and "complexity: results current" in out
    assert (results / "complexity.csv").stat().st_mtime_ns == first_mtime
    assert "extra" in _io.read_results(results, "complexity_table").columns
    suite.main(suite_args(results, figures))  # the sidecar now vouches for the new table
    assert "summary table rewritten" not in capsys.readouterr().out


@pytest.mark.e2e
def test_a_csv_replaced_under_its_sidecar_is_recomputed(tmp_path, capsys):
    # Issue 29.1: another run's CSV copied over the committed one, sidecar left in place.
    results, figures = tmp_path / "results", tmp_path / "figures"
    suite.main(suite_args(results, figures))
    other = tmp_path / "other"
    run(suite.compose_config("complexity", "smoke", [f"results_dir={other}",
                                                     "experiment.n_points=2"]))
    shutil.copy(other / "complexity.csv", results / "complexity.csv")
    capsys.readouterr()
    suite.main(suite_args(results, figures))
    out = capsys.readouterr().out
    assert "complexity: running" in out and "the CSV differs" in out


@pytest.mark.e2e
def test_an_edited_summary_table_is_rewritten_from_the_rows(tmp_path, capsys):
    results, figures = tmp_path / "results", tmp_path / "figures"
    suite.main(suite_args(results, figures))
    table = results / "complexity_table.csv"
    good, first_mtime = table.read_text(), (results / "complexity.csv").stat().st_mtime_ns
    table.write_text(good.replace("ssc", "edited", 1))
    capsys.readouterr()
    # Issue 37.4: --check fails on it (it used to say "resummarise", exit 0) ...
    assert suite.main(["--check", *suite_args(results, figures)]) == 1
    assert "the summary table is not what its rows give" in capsys.readouterr().out
    # ... and the suite repairs it from the rows.
    suite.main(suite_args(results, figures))
    out = capsys.readouterr().out
    assert "summary table rewritten" in out and "complexity: running" not in out
    assert table.read_text() == good
    assert (results / "complexity.csv").stat().st_mtime_ns == first_mtime


@pytest.mark.e2e
def test_a_fingerprint_pasted_into_another_sidecar_is_recomputed(tmp_path, capsys):
    # Issue 29.1: a run with another config, its sidecar given the committed fingerprint.
    results, figures = tmp_path / "results", tmp_path / "figures"
    suite.main(suite_args(results, figures))
    good = json.loads((results / "complexity.meta.json").read_text())
    run(suite.compose_config("complexity", "smoke", [f"results_dir={results}",
                                                     "experiment.n_points=2"]))
    forged = json.loads((results / "complexity.meta.json").read_text())
    forged["fingerprint"], forged["executed"] = good["fingerprint"], good["executed"]
    (results / "complexity.meta.json").write_text(json.dumps(forged))
    capsys.readouterr()
    suite.main(suite_args(results, figures))
    out = capsys.readouterr().out
    assert "complexity: running" in out and "not that of its own config" in out


@pytest.mark.e2e
def test_results_written_by_another_config_are_recomputed(tmp_path, capsys):
    # Issue 13.1: a hand run with another config (here another profile's grid) wrote the CSV;
    # the suite used to trust FINGERPRINTS.json by name and publish those rows as current.
    results, figures = tmp_path / "results", tmp_path / "figures"
    suite.main(suite_args(results, figures))
    run(suite.compose_config("complexity", "smoke", [f"results_dir={results}",
                                                     "experiment.n_points=2"]))
    capsys.readouterr()
    suite.main(suite_args(results, figures))
    assert "complexity: running" in capsys.readouterr().out
    meta = json.loads((results / "complexity.meta.json").read_text())
    assert meta["config"]["experiment"]["n_points"] == 3


@pytest.mark.e2e
def test_a_deleted_summary_table_fails_the_check(tmp_path, capsys):
    results, figures = tmp_path / "results", tmp_path / "figures"
    suite.main(suite_args(results, figures))
    (results / "complexity_table.csv").unlink()
    capsys.readouterr()
    assert suite.main(["--check", *suite_args(results, figures)]) == 1
    assert "the summary table is not what its rows give" in capsys.readouterr().out


@pytest.mark.e2e
def test_a_csv_without_a_sidecar_is_recomputed(tmp_path, capsys):
    results, figures = tmp_path / "results", tmp_path / "figures"
    suite.main(suite_args(results, figures))
    (results / "complexity.meta.json").unlink()
    capsys.readouterr()
    suite.main(suite_args(results, figures))
    assert "complexity: running" in capsys.readouterr().out


def test_result_sources_follow_imports_only():
    names = {path.relative_to(REPO_ROOT).as_posix()
             for path in _fingerprint.result_sources("hopkins_observation")}
    assert {"experiments/hopkins_observation.py", "experiments/_observation.py",
            "experiments/_runner.py", "kssc/coding/fista.py"} <= names
    assert not {"experiments/yale.py", "experiments/plot.py", "experiments/report.py"} & names


def test_code_left_out_of_fingerprints_is_not_imported_by_experiments():
    sources = [path.relative_to(REPO_ROOT).as_posix()
               for path in _fingerprint.result_sources("scale")]
    assert not [path for path in sources if path.startswith(("kssc/cli/", "kssc/distributed/"))]
    pattern = re.compile(r"^\s*(?:from|import) (?:kssc|\.)"
                         r"(?:\.?(?:cli|_cli_\w+|__main__|plot|distributed)\b|"
                         r" import .*\b(?:cli|plot|distributed)\b)", re.MULTILINE)
    for path in [*REPO_ROOT.glob("experiments/*.py"), *REPO_ROOT.glob("kssc/**/*.py")]:
        if not path.relative_to(REPO_ROOT).as_posix().startswith(_fingerprint.NOT_RESULT_CODE):
            assert not pattern.search(path.read_text()), path
    assert not any("kssc.distributed" in path.read_text() or "kssc.cli" in path.read_text()
                   for path in REPO_ROOT.glob("conf/**/*.yaml"))


def test_result_sources_do_not_follow_the_configs_targets_into_experiments():
    # The tuned estimators move into kssc/, which every fingerprint covers.
    assert "_tuned.py" not in {path.name for path in _fingerprint.result_sources("hopkins155")}


def test_the_suite_runs_every_experiment_but_the_long_benchmarks():
    names = _config.experiment_names()
    assert {"tir", "scale", "digits"} <= {n for n in names if suite.in_suite(n)}
    assert not suite.in_suite("hopkins155") and not suite.in_suite("yale_subjects")


@pytest.mark.e2e
def test_paper_profile_results_stay_current_for_the_default_profile(tmp_path, capsys,
                                                                     monkeypatch):
    # Issue 16: `make figures` must not replace committed paper-protocol results by a default
    # run; the reverse (paper asked, default results present) recomputes.
    results, figures = tmp_path / "results", tmp_path / "figures"
    real_compose = _staleness.compose_config

    def compose(name, profile, overrides=()):
        # Give the two profiles different grids, as synthetic_dvsn's trials differ.
        extra = ["experiment.n_points=2"] if profile == "paper" else []
        return real_compose(name, "smoke", [*overrides, *extra])

    monkeypatch.setattr(_staleness, "compose_config", compose)
    monkeypatch.setattr(suite, "compose_config", compose)
    args = ["--only", "complexity", "--results", str(results), "--figures", str(figures)]
    suite.main(["--profile", "paper", *args])
    capsys.readouterr()
    suite.main(["--profile", "default", *args])
    assert "complexity: results current (profile=paper" in capsys.readouterr().out
    suite.main(["--profile", "default", "--force", *args])
    assert "complexity: running" in capsys.readouterr().out
    suite.main(["--profile", "paper", *args])
    assert "complexity: running" in capsys.readouterr().out


def test_rows_that_are_not_the_configs_grid_fail(tmp_path):
    # Issue 37.4: a smoke CSV under the paper sidecar's config passed as the paper result.
    conf = _config.config_as_dict(suite.compose_config("yale", "paper"))
    declared = _runner.load("yale")
    tasks = declared.tasks(conf["experiment"], None)
    rows = pd.DataFrame([{"experiment": "yale", "method": method, **cell, "trial": trial}
                         for cell, trial in tasks for method in ("ssc", "kssc")])
    rows.to_csv(tmp_path / "yale.csv", index=False)
    meta = {"config": conf}
    assert _staleness.grid_problem(tmp_path, "yale", meta) is None
    rows[rows["trial"] < 2].to_csv(tmp_path / "yale.csv", index=False)  # a smoke run's trials
    problem = _staleness.grid_problem(tmp_path, "yale", meta)
    assert problem.startswith("the rows are not the grid its config defines")
    assert f"{len(tasks) - 2 * len(conf['experiment']['variants'])} of {len(tasks)}" in problem


def test_a_run_into_the_committed_results_is_refused():
    # Issue 37.3: a hand-started run replaced the committed tir results with 12 smoke rows.
    for folder in (REPO_ROOT / "results", REPO_ROOT / "results" / ".." / "results"):
        with pytest.raises(ValueError, match="committed results/ folder, which only the suite"):
            run(suite.compose_config("complexity", "smoke", [f"results_dir={folder}"]))
    before = (REPO_ROOT / "results" / "complexity.csv").stat().st_mtime_ns
    done = subprocess.run([sys.executable, "-m", "experiments.run", "experiment=complexity",
                           "profile=smoke", f"hydra.run.dir={REPO_ROOT / 'results'}"],
                          cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    assert done.returncode != 0 and "only the suite writes" in done.stderr
    assert (REPO_ROOT / "results" / "complexity.csv").stat().st_mtime_ns == before


def test_two_overrides_giving_one_column_are_refused():
    # Issue 37.4: `seed=2 +config_seed=7` recorded a value the run did not use.
    cfg = suite.compose_config("complexity", "smoke", ["seed=2", "+config_seed=7"])
    with pytest.raises(ValueError, match="both give column 'config_seed'; one column holds one"):
        override_columns(cfg, ["seed=2", "+config_seed=7"])
    assert override_columns(cfg, ["seed=2"]) == {"config_seed": 2}
