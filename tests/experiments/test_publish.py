"""The publishing wing (experiments/publish/): table specs -> DataFrames -> the marked blocks
of README.md and docs/, and `python -m experiments.readme [--check]`."""

import json

import pandas as pd
import pytest

from experiments import readme
from experiments.publish import feeds, markdown, tables

SPEC = {
    "csv": "toy_table", "where": {"method": ["ssc", "kssc"]}, "index": ["n_samples"],
    "columns": [
        {"header": "N", "value": "n_samples", "format": "{:,.0f}"},
        {"header": "SSC", "value": "error_pct_mean", "format": "{:.2f} %",
         "within": {"method": "ssc"}},
        {"header": "k-SSC", "value": "error_pct_mean", "format": "{:.2f} %",
         "within": {"method": "kssc"}},
        {"header": "k-SSC time", "value": "time_fit_s_mean", "format": "{:.1f} s",
         "within": {"method": "kssc"}},
    ],
}
SPECS = {"toy": SPEC}
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


def test_fill_rounds_filters_and_marks_missing(tmp_path):
    write_results(tmp_path)
    text, errors = markdown.fill(TEXT, tmp_path, SPECS)
    assert errors == {}
    assert text == TEXT.replace("old content\n", EXPECTED)   # nothing outside the block changes
    assert "50.00" not in text                               # tsc filtered out


def test_update_is_byte_stable_and_check_names_stale_blocks(tmp_path):
    write_results(tmp_path)
    path = tmp_path / "README.md"
    path.write_text(TEXT)
    assert markdown.update(path, tmp_path, check=True, specs=SPECS) == (["toy"], {})
    assert path.read_text() == TEXT                          # --check writes nothing
    assert markdown.update(path, tmp_path, specs=SPECS) == (["toy"], {})
    first = path.read_bytes()
    mtime = path.stat().st_mtime_ns
    assert markdown.update(path, tmp_path, specs=SPECS) == ([], {})
    assert path.read_bytes() == first and path.stat().st_mtime_ns == mtime   # not rewritten
    assert not list(tmp_path.glob(".README.md.*"))                           # no temp left
    assert markdown.update(path, tmp_path, check=True, specs=SPECS) == ([], {})
    write_results(tmp_path, kssc_error=0.7)                  # the results move on
    assert markdown.update(path, tmp_path, check=True, specs=SPECS) == (["toy"], {})


def test_main_check_exits_1_naming_stale_block(tmp_path, monkeypatch, capsys):
    write_results(tmp_path)
    path = tmp_path / "README.md"
    path.write_text(TEXT)
    monkeypatch.setattr(feeds, "tables", lambda: SPECS)
    args = ["--results", str(tmp_path), "--readme", str(path)]
    assert readme.main([*args, "--check"]) == 1
    assert "'toy' is stale" in capsys.readouterr().err
    assert readme.main(args) == 0
    assert readme.main([*args, "--check"]) == 0


def test_missing_csv_column_or_table_keeps_the_block_and_is_reported(tmp_path):
    text, errors = markdown.fill(TEXT, tmp_path, SPECS)
    assert text == TEXT and "missing" in errors["toy"]
    pd.DataFrame({"n_samples": [1], "method": ["ssc"], "mean": [1.0]}).to_csv(
        tmp_path / "toy_table.csv", index=False)              # an old column name
    text, errors = markdown.fill(TEXT, tmp_path, SPECS)
    assert text == TEXT and "error_pct_mean" in errors["toy"]
    text, errors = markdown.fill(TEXT, tmp_path, {})
    assert text == TEXT and "no table 'toy'" in errors["toy"]


def test_published_and_paper_figures_come_from_the_owners_feeds(tmp_path):
    pd.DataFrame({"group": ["all", "2 motions"], "method": ["ssc_tuned"] * 2}).to_csv(
        tmp_path / "bench_table.csv", index=False)
    owner = {"claims": [
        {"text": "t", "rule": "at_most", "params": {"where": {"group": "all",
         "method": "ssc_tuned"}, "value": "error_pct_mean", "threshold": 2.18}},
        {"text": "t", "rule": "at_most", "params": {"where": {"group": "all",
         "method": "kssc_tuned"}, "value": "error_pct_mean", "threshold": 9.0}}],
        "table": {"paper": [{"method": "ssc_tuned", "error_pct_mean": 4.5}]}}
    spec = {"csv": "bench_table", "index": ["group", "method"], "feeds": owner, "columns": [
        {"header": "group", "value": "group"},
        {"header": "published", "published": "ssc_tuned", "format": "{:g}"},
        {"header": "paper", "paper": "error_pct_mean", "format": "{:.1f}"}]}
    frame = tables.named(spec, tmp_path)
    assert frame.values.tolist() == [["all", "2.18", "4.5"], ["2 motions", "-", "4.5"]]


def test_interval_formatter():
    assert tables.interval(-0.5, -1.25, 0.25, "{:.2f}", sign=True) == "-0.50 [-1.25, +0.25]"
    assert tables.interval(2.0, float("nan"), float("nan"), "{:.1f}") == "2.0"
    assert tables.interval(None, 1.0, 2.0) == "[1.00, 2.00]"
    assert tables.interval(float("nan"), 1.0, 2.0) == ""


def test_interval_cells_read_the_bootstrap_columns(tmp_path):
    pd.DataFrame([{"method": "kssc", "error_pct_mean": 2.0, "error_pct_ci_low": 1.5,
                   "error_pct_ci_high": 2.75, "error_pct_vs_ssc_mean": -0.5,
                   "error_pct_vs_ssc_low": -1.25, "error_pct_vs_ssc_high": 0.25}]).to_csv(
        tmp_path / "t.csv", index=False)
    spec = {"csv": "t", "index": ["method"], "columns": [
        {"header": "mean", "interval": "error_pct", "digits": 1},
        {"header": "minus SSC", "vs_ssc": "error_pct", "digits": 2}]}
    assert tables.named(spec, tmp_path).values.tolist() == [["2.0 [1.5, 2.8]",
                                                             "-0.50 [-1.25, +0.25]"]]


def test_report_summary_formats_whole_numbers_and_pivots_means_with_intervals():
    table = pd.DataFrame({"noise": [0.0, 0.0], "method": ["kssc", "ssc"],
                          "n_trials": [10.0, 10.0], "error_pct_mean": [1.0, 2.5],
                          "error_pct_ci_low": [0.5, 2.0], "error_pct_ci_high": [1.5, 3.0]})
    wide = tables.summary(table, {"index": ["noise"], "values": "error_pct_mean"})
    assert markdown.table(wide) == ("| noise | SSC | kSSC |\n|---|---|---|\n"
                                    "| 0.00 | 2.50 [2.00, 3.00] | 1.00 [0.50, 1.50] |")
    assert tables.formatted(table[["n_trials"]]).values.tolist() == [["10"], ["10"]]


def test_every_block_is_declared_once_and_every_declared_table_is_in_a_document():
    names = [m["name"] for document in readme.DOCUMENTS
             for m in markdown.BLOCK.finditer(document.read_text())]
    assert sorted(names) == sorted(feeds.tables())


def test_committed_documents_are_current_with_committed_results():
    """`python -m experiments.readme --check` on the repository."""
    specs = feeds.tables()
    missing = [spec["csv"] for spec in specs.values()
               if "csv" in spec and not (readme.RESULTS_DIR / f"{spec['csv']}.csv").exists()]
    stale, errors = [], {}
    for document in readme.DOCUMENTS:
        found, failed = markdown.update(document, readme.RESULTS_DIR, check=True)
        stale += found
        errors.update(failed)
    errors = {name: error for name, error in errors.items()
              if specs.get(name, {}).get("csv") not in missing}
    assert (stale, errors) == ([], {}), "run: python -m experiments.readme"
    if missing:
        pytest.skip(f"results/{', '.join(missing)}.csv missing: those blocks not checked")


def test_provenance_block_reads_each_experiments_sidecar(tmp_path):
    for name, profile, trials, seconds in (("tir", "paper", 50, 90.0), ("yale", "default", 20, 30)):
        (tmp_path / f"{name}.meta.json").write_text(json.dumps({
            "experiment": name, "fingerprint": "x-y", "wall_time_s": seconds,
            "git_revision": "0123456789", "config": {"profile": {"name": profile},
                                                     "experiment": {"trials": trials}},
            **({"machine": {"cpu": "AMD EPYC", "blas": []}} if name == "tir" else {})}))
    (tmp_path / "peers.meta.json").write_text(json.dumps({
        "experiment": "peers", "fingerprint": None, "wall_time_s": 1.0, "config": {}}))
    new, errors = markdown.fill("<!-- table: provenance -->\n<!-- /table -->\n", tmp_path)
    assert not errors
    assert "| `tir` | paper | 50 | 1.5 min | 0123456 | AMD EPYC |" in new
    assert "| `yale` | default | 20 | 0.5 min | 0123456 | not recorded |" in new
    assert "peers" not in new


def test_feeds_is_read_in_report_order_with_figures_and_suite_membership():
    names = [name for name, _ in feeds.declared()]
    orders = [f.get("order", 1000) for _, f in feeds.declared()]
    assert orders == sorted(orders) and "tir" in names
    assert not feeds.in_suite("hopkins155") and feeds.in_suite("tir")
    assert [p["experiment"] for p in feeds.figures()["tir_motion_time"]] == ["tir", "hopkins"]


def test_report_check_exits_1_when_report_is_out_of_date(tmp_path, capsys):
    from experiments import report

    args = ["--results", str(tmp_path)]
    assert report.main([*args, "--check"]) == 1               # no REPORT.md yet
    assert not (tmp_path / "REPORT.md").exists()
    assert report.main(args) == 0 and "Not run." in (tmp_path / "REPORT.md").read_text()
    assert report.main([*args, "--check"]) == 0
    (tmp_path / "REPORT.md").write_text("edited\n")
    assert report.main([*args, "--check"]) == 1
    assert "out of date" in capsys.readouterr().out
