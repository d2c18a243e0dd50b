"""`make figures`' driver: runs what is missing or stale, skips what is current."""

import json

from experiments import suite


def test_suite_skips_current_results_and_reruns_stale(tmp_path, capsys, monkeypatch):
    results, figures = tmp_path / "results", tmp_path / "figures"
    args = ["--profile", "smoke", "--only", "complexity", "--results", str(results),
            "--figures", str(figures)]
    suite.main(args)
    assert (results / "complexity.csv").exists() and (results / "REPORT.md").exists()
    assert any(figures.glob("*.png"))
    record = json.loads((results / suite.FINGERPRINTS).read_text())
    first_mtime = (results / "complexity.csv").stat().st_mtime_ns
    capsys.readouterr()

    suite.main(args)
    assert "complexity: results current" in capsys.readouterr().out
    assert (results / "complexity.csv").stat().st_mtime_ns == first_mtime

    monkeypatch.setattr(suite, "code_digest", lambda name, cfg=None: "changed-code")
    suite.main(args)
    assert "complexity: running" in capsys.readouterr().out
    assert json.loads((results / suite.FINGERPRINTS).read_text())["complexity"] != record["complexity"]


def test_result_sources_follow_imports_only():
    names = {path.name for path in suite.result_sources("tir_large")}
    assert {"tir_large.py", "tir.py", "_runner.py", "fista.py"} <= names
    assert "yale.py" not in names and "plot.py" not in names


def test_result_sources_include_the_modules_the_config_instantiates():
    cfg = suite.compose_config("hopkins155", "smoke")
    assert "_tuned.py" in {path.name for path in suite.result_sources("hopkins155", cfg)}
    assert "_tuned.py" not in {path.name for path in suite.result_sources("tir", suite.compose_config("tir", "smoke"))}
