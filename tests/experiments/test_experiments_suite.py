"""`make figures`' driver: runs what is missing or stale, skips what is current, and trusts
a CSV only when its own sidecar carries the fingerprint of the config the suite would run."""

import json
import re

from experiments import _config, _fingerprint, suite
from experiments.run import run


def suite_args(results, figures):
    return ["--profile", "smoke", "--only", "complexity", "--results", str(results),
            "--figures", str(figures)]


def test_suite_skips_current_results_and_reruns_stale(tmp_path, capsys, monkeypatch):
    results, figures = tmp_path / "results", tmp_path / "figures"
    suite.main(suite_args(results, figures))
    assert (results / "complexity.csv").exists() and (results / "REPORT.md").exists()
    assert any(figures.glob("*.png"))
    first = json.loads((results / "complexity.meta.json").read_text())["fingerprint"]
    first_mtime = (results / "complexity.csv").stat().st_mtime_ns
    capsys.readouterr()

    suite.main(suite_args(results, figures))
    assert "complexity: results current" in capsys.readouterr().out
    assert (results / "complexity.csv").stat().st_mtime_ns == first_mtime

    monkeypatch.setattr(_fingerprint, "code_digest", lambda name: "changed-code")
    suite.main(suite_args(results, figures))
    assert "complexity: running" in capsys.readouterr().out
    assert json.loads((results / "complexity.meta.json").read_text())["fingerprint"] != first


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


def test_a_csv_without_a_sidecar_is_recomputed(tmp_path, capsys):
    results, figures = tmp_path / "results", tmp_path / "figures"
    suite.main(suite_args(results, figures))
    (results / "complexity.meta.json").unlink()
    capsys.readouterr()
    suite.main(suite_args(results, figures))
    assert "complexity: running" in capsys.readouterr().out


def test_result_sources_follow_imports_only():
    names = {path.name for path in _fingerprint.result_sources("hopkins_observation")}
    assert {"hopkins_observation.py", "_observation.py", "_runner.py", "fista.py"} <= names
    assert "yale.py" not in names and "plot.py" not in names and "report.py" not in names


def test_code_left_out_of_fingerprints_is_not_imported_by_experiments():
    from experiments._io import REPO_ROOT

    assert {"cli.py", "_fit.py"}.isdisjoint(
        {path.name for path in _fingerprint.result_sources("scale")})
    pattern = re.compile(r"^\s*(?:from|import) (?:kssc|\.)(?:\.?(?:cli|__main__|distributed)\b|"
                         r" import .*\b(?:cli|distributed)\b)", re.MULTILINE)
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


def test_paper_profile_results_stay_current_for_the_default_profile(tmp_path, capsys,
                                                                     monkeypatch):
    # Issue 16: `make figures` must not replace committed paper-protocol results by a default
    # run; the reverse (paper asked, default results present) recomputes.
    results, figures = tmp_path / "results", tmp_path / "figures"
    real_compose = suite.compose_config

    def compose(name, profile, overrides=()):
        # Give the two profiles different grids, as synthetic_dvsn's trials differ.
        extra = ["experiment.n_points=2"] if profile == "paper" else []
        return real_compose(name, "smoke", [*overrides, *extra])

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
