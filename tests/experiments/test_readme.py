"""README's result tables come from the summary CSVs (experiments/readme.py)."""

import math

import pandas as pd
import pytest

from experiments import readme

SPEC = {
    "csv": "toy_table", "where": {"method": ["ssc", "kssc"]}, "index": ["n_samples"],
    "columns": [
        ("N", "n_samples", "{:,.0f}", None),
        ("SSC", "error_pct_mean", "{:.2f} %", {"method": "ssc"}),
        ("k-SSC", "error_pct_mean", "{:.2f} %", {"method": "kssc"}),
        ("k-SSC time", "time_fit_s_mean", "{:.1f} s", {"method": "kssc"}),
    ],
}
BLOCKS = {"toy": SPEC}
TEXT = ("# Title\n\nBefore.\n\n<!-- table: toy -->\nold content\n<!-- /table -->\n"
        "\nAfter 16 times.\n")
EXPECTED = ("| N | SSC | k-SSC | k-SSC time |\n|---|---|---|---|\n"
            "| 1,000 | 1.23 % | 0.50 % | 0.1 s |\n"
            "| 20,000 | 10.00 % | - | - |\n")


def write_results(folder, kssc_error=0.499):
    pd.DataFrame({
        "n_samples": [1000, 1000, 1000, 20000],
        "method": ["ssc", "kssc", "tsc", "ssc"],
        "error_pct_mean": [1.234, kssc_error, 50.0, 9.999],
        "time_fit_s_mean": [2.0, 0.149, 0.3, 40.0],
    }).to_csv(folder / "toy_table.csv", index=False)


def test_render_rounds_filters_and_marks_missing(tmp_path):
    write_results(tmp_path)
    text, errors = readme.render(TEXT, tmp_path, BLOCKS)
    assert errors == {}
    assert text == TEXT.replace("old content\n", EXPECTED)   # nothing outside the block changes
    assert "50.00" not in text                               # tsc filtered out


def test_update_is_byte_stable_and_check_names_stale_blocks(tmp_path, capsys):
    write_results(tmp_path)
    path = tmp_path / "README.md"
    path.write_text(TEXT)
    assert readme.update(path, tmp_path, check=True, blocks=BLOCKS) == (["toy"], {})
    assert path.read_text() == TEXT                          # --check writes nothing
    assert readme.update(path, tmp_path, blocks=BLOCKS) == (["toy"], {})
    first = path.read_bytes()
    mtime = path.stat().st_mtime_ns
    assert readme.update(path, tmp_path, blocks=BLOCKS) == ([], {})
    assert path.read_bytes() == first and path.stat().st_mtime_ns == mtime   # not rewritten
    assert not list(tmp_path.glob(".README.md.*"))                           # no temp left
    assert readme.update(path, tmp_path, check=True, blocks=BLOCKS) == ([], {})
    write_results(tmp_path, kssc_error=0.7)                  # the results move on
    assert readme.update(path, tmp_path, check=True, blocks=BLOCKS) == (["toy"], {})


def test_main_check_exits_1_naming_stale_block(tmp_path, monkeypatch, capsys):
    write_results(tmp_path)
    path = tmp_path / "README.md"
    path.write_text(TEXT)
    monkeypatch.setattr(readme, "BLOCKS", BLOCKS)
    args = ["--results", str(tmp_path), "--readme", str(path)]
    assert readme.main([*args, "--check"]) == 1
    assert "'toy' is stale" in capsys.readouterr().err
    assert readme.main(args) == 0
    assert readme.main([*args, "--check"]) == 0


def test_missing_csv_or_column_keeps_the_block_and_is_reported(tmp_path):
    text, errors = readme.render(TEXT, tmp_path, BLOCKS)
    assert text == TEXT and "missing" in errors["toy"]
    pd.DataFrame({"n_samples": [1], "method": ["ssc"], "mean": [1.0]}).to_csv(
        tmp_path / "toy_table.csv", index=False)              # an old column name
    text, errors = readme.render(TEXT, tmp_path, BLOCKS)
    assert text == TEXT and "error_pct_mean" in errors["toy"]


def test_published_figures_come_from_the_claims(tmp_path):
    (tmp_path / "bench.yaml").write_text(
        "feeds:\n  claims:\n"
        "    - {text: t, rule: at_most, params: {where: {group: all, method: ssc_tuned},"
        " value: error_pct_mean, threshold: 2.18}}\n"
        "    - {text: t, rule: at_most, params: {where: {group: all, method: kssc_tuned},"
        " value: error_pct_mean, threshold: 9.0}}\n")
    source = readme.published("bench", "ssc_tuned")
    assert source({"group": "all"}, None, conf_dir=tmp_path) == 2.18
    assert pd.isna(source({"group": "2 motions"}, None, conf_dir=tmp_path))


def test_every_readme_block_is_declared_and_every_declared_block_is_in_readme():
    names = [m["name"] for document in readme.DOCUMENTS
             for m in readme.BLOCK.finditer(document.read_text())]
    assert sorted(names) == sorted(readme.BLOCKS)


def test_committed_readme_is_current_with_committed_results():
    """`python -m experiments.readme --check` on the repository."""
    missing = [spec["csv"] for spec in readme.BLOCKS.values()
               if "csv" in spec and not (readme.RESULTS_DIR / f"{spec['csv']}.csv").exists()]
    stale, errors = [], {}
    for document in readme.DOCUMENTS:
        found, failed = readme.update(document, check=True)
        stale += found
        errors.update(failed)
    errors = {name: error for name, error in errors.items()
              if readme.BLOCKS.get(name, {}).get("csv") not in missing}
    assert (stale, errors) == ([], {}), "run: python -m experiments.readme"
    if missing:
        pytest.skip(f"results/{', '.join(missing)}.csv missing: those README blocks not checked")


def test_interval_cells_read_the_bootstrap_columns_and_render_signed():
    group = pd.DataFrame([{"error_pct_mean": 2.0, "error_pct_ci_low": 1.5,
                           "error_pct_ci_high": 2.75, "error_pct_vs_ssc_mean": -0.5,
                           "error_pct_vs_ssc_low": -1.25, "error_pct_vs_ssc_high": 0.25}])
    assert readme.mean_interval("error_pct")({}, group) == (2.0, 1.5, 2.75)
    diff = readme.versus_ssc("error_pct")({}, group)
    assert readme._with_interval(2, "+")(*diff) == "-0.50 [-1.25, +0.25]"
    assert readme._with_interval(1)(2.0, math.nan, math.nan) == "2.0"


def test_provenance_block_reads_each_experiments_sidecar(tmp_path):
    import json

    for name, profile, trials, seconds in (("tir", "paper", 50, 90.0), ("yale", "default", 20, 30)):
        (tmp_path / f"{name}.meta.json").write_text(json.dumps({
            "experiment": name, "fingerprint": "x-y", "wall_time_s": seconds,
            "git_revision": "0123456789", "config": {"profile": {"name": profile},
                                                     "experiment": {"trials": trials}}}))
    (tmp_path / "peers.meta.json").write_text(json.dumps({
        "experiment": "peers", "fingerprint": None, "wall_time_s": 1.0, "config": {}}))
    text = "<!-- table: provenance -->\n<!-- /table -->\n"
    new, errors = readme.render(text, results_dir=tmp_path)
    assert not errors
    assert "| `tir` | paper | 50 | 1.5 min | 0123456 |" in new
    assert "| `yale` | default | 20 | 0.5 min | 0123456 |" in new
    assert "peers" not in new
