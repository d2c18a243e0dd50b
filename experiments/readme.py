"""Fill README.md's result tables from the committed summary tables (results/<name>_table.csv).

README.md (and docs/scaling.md: `DOCUMENTS`) marks each generated table with a pair of
comments,

    <!-- table: scale -->
    ...generated Markdown table...
    <!-- /table -->

and `BLOCKS` below declares, per block name, the CSV it reads, the rows it keeps (`where`:
column -> value or list of values), the key columns a row of the Markdown table stands for
(`index`), and its columns as (header, source, format, row filter): the source is a CSV
column or a function of the row group (the published figures come from the claims in the
experiment's config, `feeds.claims`, or its `feeds.table.paper`); the filter picks, within a
row group, the one CSV row the cell reads (e.g. the method). A missing value renders as "-".
Everything between the markers is replaced; nothing else in README.md changes. The file is
written atomically and only when its text changes, so running this twice changes nothing.

Not part of any experiment's fingerprint: it only reads the results. The suite calls it at
the end when it wrote the committed results/.

Usage: python -m experiments.readme [--check] [--results DIR] [--readme FILE]
(without --readme: every file of `DOCUMENTS`)
(--check writes nothing and exits 1 naming the stale blocks and those it cannot render)
"""

import argparse
import json
import math
import os
import re
import sys
import tempfile
from pathlib import Path

import pandas as pd
from omegaconf import OmegaConf

from .conventions import label

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCUMENTS = (README, ROOT / "docs" / "scaling.md")
RESULTS_DIR = ROOT / "results"
CONF_DIR = ROOT / "conf" / "experiment"
MISSING = "-"
BLOCK = re.compile(r"(<!-- table: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /table -->)", re.DOTALL)


def feeds(experiment, conf_dir=None):
    """The `feeds` of conf/experiment/<experiment>.yaml (empty when absent)."""
    path = Path(conf_dir or CONF_DIR) / f"{experiment}.yaml"
    if not path.exists():
        return {}
    return OmegaConf.to_container(OmegaConf.load(path)).get("feeds") or {}


def published(experiment, method, value="error_pct_mean"):
    """Cell source: the published figure a claim of `experiment` compares `method` with.

    Read from the claims of its config (`feeds.claims`): a claim whose params select
    `method` (`where.method`) and `value` and give a `threshold`; the claim's other `where`
    keys must match the row group's key values.
    """
    def source(key, group, conf_dir=None):
        for claim in feeds(experiment, conf_dir).get("claims") or []:
            params = claim.get("params") or {}
            where = dict(params.get("where") or {})
            if where.pop("method", None) != method or params.get("value") != value:
                continue
            if "threshold" in params and all(str(key.get(c)) == str(v) for c, v in where.items()):
                return params["threshold"]
        return math.nan
    return source


def paper(experiment, value="error_pct_mean"):
    """Cell source: the paper's `value` for the row's method (`feeds.table.paper`)."""
    def source(key, group, conf_dir=None):
        rows = (feeds(experiment, conf_dir).get("table") or {}).get("paper") or []
        for row in rows:
            if str(row.get("method")) == str(key.get("method")) and value in row:
                return row[value]
        return math.nan
    return source


def seed_range(key, group, conf_dir=None):
    """Cell source: the range of the per-seed means (hopkins155's trial means)."""
    row = group.iloc[0]
    return (row["error_pct_trial_mean_min"], row["error_pct_trial_mean_max"])


def stage_rss(key, group, conf_dir=None):
    """Cell source: the peak worker RSS of each stage (bench_distributed)."""
    row = group.iloc[0]
    return tuple(row[f"rss_{stage}_gib"] for stage in ("neighbours", "coefficients", "spectral"))


def _megabytes(value):
    return f"{value / 1e6:,.0f} MB"


def mean_interval(value):
    """Cell source: `value`'s mean over the row's units with its 95 % bootstrap interval.

    From the summary table's `<value>_mean`, `<value>_ci_low` and `<value>_ci_high`
    (`experiments._bootstrap`: percentile bootstrap over trials, draws or sequences); one
    unit gives no interval.
    """
    def source(key, group, conf_dir=None):
        row = group.iloc[0]
        return (row[f"{value}_mean"], row[f"{value}_ci_low"], row[f"{value}_ci_high"])
    return source


def versus_ssc(value):
    """Cell source: the row's mean paired difference to SSC in `value` (method minus SSC, on
    the same units) with its 95 % bootstrap interval; missing for SSC itself."""
    def source(key, group, conf_dir=None):
        row = group.iloc[0]
        return (row[f"{value}_vs_ssc_mean"], row[f"{value}_vs_ssc_low"],
                row[f"{value}_vs_ssc_high"])
    return source


def _with_interval(digits, sign=""):
    def fmt(mean, low, high):
        if math.isnan(low):
            return f"{mean:{sign}.{digits}f}"
        return f"{mean:{sign}.{digits}f} [{low:{sign}.{digits}f}, {high:{sign}.{digits}f}]"
    return fmt


def _versus_ssc_columns(ssc, kssc):
    """Our SSC's and k-SSC's mean error with 95 % intervals, and their paired difference."""
    return [
        ("our SSC [95 % interval]", mean_interval("error_pct"), _with_interval(2),
         {"method": ssc}),
        ("k-SSC [95 % interval]", mean_interval("error_pct"), _with_interval(2),
         {"method": kssc}),
        ("k-SSC - SSC [95 % interval]", versus_ssc("error_pct"), _with_interval(2, "+"),
         {"method": kssc}),
    ]


def _variant_columns(variant):
    """A variant's mean error with its 95 % interval, median and paired difference to SSC."""
    within = {"variant": variant}
    return [
        (f"{variant}: mean [95 % interval]", mean_interval("error_pct"), _with_interval(1),
         within),
        (f"{variant}: median", "error_pct_median", "{:.1f}", within),
        (f"{variant}: minus SSC [95 % interval]", versus_ssc("error_pct"),
         _with_interval(1, "+"), within),
    ]


def sidecar_table(results_dir):
    """One row per experiment with results: the profile, trials and wall time of the run that
    wrote them (from its sidecar, results/<name>.meta.json)."""
    rows = []
    for path in sorted(Path(results_dir).glob("*.meta.json")):
        meta = json.loads(path.read_text())
        config = meta.get("config") or {}
        if meta.get("fingerprint") is None:  # benchmarks, not experiments
            continue
        rows.append({"experiment": meta["experiment"],
                     "profile": (config.get("profile") or {}).get("name", "?"),
                     "trials": config.get("experiment", {}).get("trials"),
                     "wall_time_min": meta["wall_time_s"] / 60,
                     "revision": (meta.get("git_revision") or "?")[:7]})
    if not rows:
        raise BlockError(f"no sidecar in {results_dir}")
    return pd.DataFrame(rows)


# One dict per README block. Columns: (header, CSV column or function, format, row filter).
BLOCKS = {
    "provenance": {
        "table": sidecar_table, "index": ["experiment"],
        "columns": [
            ("experiment", "experiment", "`{}`", None),
            ("profile", "profile", "{}", None),
            ("trials per cell", "trials", "{:.0f}", None),
            ("wall time", "wall_time_min", "{:.1f} min", None),
            ("revision", "revision", "{}", None),
        ],
    },
    "scale": {
        "csv": "scale_table", "where": {"method": ["kssc", "kssc_generic"]},
        "index": ["method", "n_samples"],
        "columns": [
            ("setting", "method", {"kssc": "the paper's", "kssc_generic": "defaults"}.get,
             None),
            ("N", "n_samples", "{:,.0f}", None),
            ("neighbours", "time_neighbours_s_median", "{:.1f} s", None),
            ("coefficients", "time_coefficients_s_median", "{:.1f} s", None),
            ("spectral", "time_spectral_s_median", "{:.1f} s", None),
            ("total", "time_fit_s_median", "{:.1f} s", None),
            ("peak RSS", "rss_peak_gib_median", "{:.2f} GiB", None),
            ("error", "error_pct_median", "{:.2f} %", None),
            ("load average", "load_average_median", "{:.1f}", None),
        ],
    },
    "hopkins155": {
        "csv": "hopkins155_table", "index": ["group"],
        "columns": [
            ("Hopkins 155 (mean error %)", "group", "{}", None),
            ("sequences", "n_sequences", "{:.0f}", {"method": "ssc_tuned"}),
            *_versus_ssc_columns("ssc_tuned", "kssc_tuned"),
            ("k-SSC, range over seeds", seed_range, "{:.2f}-{:.2f}", {"method": "kssc_tuned"}),
            ("published SSC", published("hopkins155", "ssc_tuned"), "{:g}", None),
            ("SSC time (s / seq.)", "time_fit_s_mean", "{:.2f}", {"method": "ssc_tuned"}),
            ("k-SSC time (s / seq.)", "time_fit_s_mean", "{:.2f}", {"method": "kssc_tuned"}),
        ],
    },
    "yale_subjects": {
        "csv": "yale_subjects_table", "index": ["n_subjects"],
        "columns": [
            ("Yale B subjects (mean error %)", "n_subjects", "{}", None),
            ("draws", "n_trials", "{:.0f}", {"method": "ssc_tuned"}),
            *_versus_ssc_columns("ssc_tuned", "kssc_tuned"),
            ("published SSC", published("yale_subjects", "ssc_tuned"), "{:g}", None),
            ("SSC time (s)", "time_fit_s_mean", "{:.1f}", {"method": "ssc_tuned"}),
            ("k-SSC time (s)", "time_fit_s_mean", "{:.1f}", {"method": "kssc_tuned"}),
        ],
    },
    "peers": {
        "csv": "peers", "index": ["n_samples", "method"],
        "columns": [
            ("N", "n_samples", "{:,}", None),
            ("method", "method", "{}", None),
            ("CPU time (s)", "cpu_s", "{:.1f}", None),
            ("wall time (s)", "time_s", "{:.1f}", None),
            ("wall time / k-SSC's", "time_ratio_to_kssc", "{:.1f}", None),
            ("CPU time / k-SSC's", "cpu_ratio_to_kssc", "{:.1f}", None),
            ("error %", "error", "{:.2f}", None),
            ("load average at start", "load_start", "{:.1f}", None),
        ],
    },
    "bench_kssc": {
        "csv": "bench_kssc", "index": ["data", "call"],
        "columns": [
            ("N", "n_samples", "{:,}", None),
            ("D", "ambient_dim", "{}", None),
            ("call", "call", "{}", None),
            ("neighbours", "time_neighbours_s", "{:.2f} s", None),
            ("coefficients", "time_coefficients_s", "{:.2f} s", None),
            ("spectral", "time_spectral_s", "{:.2f} s", None),
            ("total", "time_fit_s", "{:.2f} s", None),
            ("peak RSS", "rss_peak_gib", "{:.2f} GiB", None),
            ("error", "error_pct", "{:.2f} %", None),
            ("neighbour recall", "neighbor_recall", "{:.3f}", None),
            ("neighbours / GEMM rate", "neighbours_vs_ceiling", "{:.2f}", None),
            ("coefficients / GEMM rate", "coefficients_vs_ceiling", "{:.2f}", None),
            ("load average", "load_average", "{:.1f}", None),
        ],
    },
    "bench_distributed": {
        "csv": "bench_distributed", "index": ["n_samples", "workers"],
        "columns": [
            ("N", "n_samples", "{:,}", None),
            ("workers", "workers", "{}", None),
            ("blocks", "blocks", "{}", None),
            ("neighbours", "time_neighbours_s", "{:.1f} s", None),
            ("coefficients", "time_coefficients_s", "{:.1f} s", None),
            ("spectral", "time_spectral_s", "{:.1f} s", None),
            ("total", "time_total_s", "{:.1f} s", None),
            ("peak worker RSS: neighbours / coefficients / spectral", stage_rss,
             "{:.2f} / {:.2f} / {:.2f} GiB", None),
            ("by list", "shuffle_rows_by_list_bytes", _megabytes, None),
            ("neighbour rows", "shuffle_neighbour_rows_bytes", _megabytes, None),
            ("transpose", "shuffle_transpose_bytes", _megabytes, None),
            ("eigen halo", "shuffle_eigen_halo_bytes", _megabytes, None),
            ("recall", "recall", "{:.3f}", None),
            ("error", "error_pct", "{:.2f} %", None),
            ("load average", "load_average", "{:.1f}", None),
        ],
    },
    "bench_coefficients": {
        "csv": "bench_coefficients", "index": ["n_samples", "n_neighbors", "solver"],
        "columns": [
            ("N", "n_samples", "{:,}", None),
            ("k", "n_neighbors", "{}", None),
            ("solver", "solver", "{}", None),
            ("time", "time_s", "{:.2f} s", None),
            ("us / point", "us_per_point", "{:.1f}", None),
            ("mean iterations", "mean_iter", "{:.0f}", None),
            ("GFLOP/s", "gflops", "{:.1f}", None),
            ("/ GEMM rate", "vs_gemm64", "{:.2f}", None),
            ("load average", "load_average", "{:.1f}", None),
        ],
    },
    "bench_options": {
        "csv": "bench_options", "index": ["option"],
        "columns": [
            ("option", "option", "{}", None),
            ("N", "n_samples", "{:,}", None),
            ("neighbours", "time_neighbours_s", "{:.1f} s", None),
            ("coefficients", "time_coefficients_s", "{:.1f} s", None),
            ("spectral", "time_spectral_s", "{:.1f} s", None),
            ("total", "time_fit_s", "{:.1f} s", None),
            ("peak RSS", "rss_peak_gib", "{:.2f} GiB", None),
            ("error", "error_pct", "{:.2f} %", None),
            ("load average", "load_average", "{:.1f}", None),
        ],
    },
    "digits": {
        "csv": "digits_table", "index": ["method"],
        "columns": [
            ("method", "method", label, None),
            ("accuracy % [95 % interval]", mean_interval("accuracy_pct"), _with_interval(1), None),
            ("minus SSC [95 % interval]", versus_ssc("accuracy_pct"), _with_interval(1, "+"),
             None),
            ("NMI", "nmi_mean", "{:.3f}", None),
            ("ARI", "ari_mean", "{:.3f}", None),
            ("time", "time_fit_s_mean", "{:.2f} s", None),
        ],
    },
    "yale": {
        "csv": "yale_table", "index": ["method"],
        "columns": [
            ("Yale B, 3 subjects (error %)", "method", label, None),
            *_variant_columns("faithful"),
            *_variant_columns("clean"),
            ("paper: mean", paper("yale", "error_pct_mean"), "{:.1f}", None),
            ("paper: median", paper("yale", "error_pct_median"), "{:.1f}", None),
        ],
    },
    "hopkins155_cv": {
        "csv": "hopkins155_cv_table", "where": {"scope": ["2 motions", "3 motions", "all"]},
        "index": ["scope"],
        "columns": [
            ("Hopkins 155, out of fold (error %)", "scope", "{}", None),
            ("sequences", "n_sequences", "{:.0f}", {"method": "kssc_cv"}),
            *_versus_ssc_columns("ssc_tuned", "kssc_cv"),
            ("k-SSC median", "error_pct_median", "{:.2f}", {"method": "kssc_cv"}),
            ("SSC median", "error_pct_median", "{:.2f}", {"method": "ssc_tuned"}),
            ("k-SSC defaults: mean", "error_pct_mean", "{:.2f}", {"method": "kssc_generic"}),
            ("published SSC", published("hopkins155_cv", "kssc_cv"), "{:g}", None),
            ("k-SSC time (s / seq.)", "time_fit_s_mean", "{:.2f}", {"method": "kssc_cv"}),
        ],
    },
    "hopkins155_cv_folds": {
        "csv": "hopkins155_cv_table", "index": ["scope"],
        "where": {"method": "kssc_cv", "scope": [f"fold {i}" for i in range(10)]},
        "columns": [
            ("fold", "scope", "{}", None),
            ("setting chosen on the other folds", "chosen", "{}", None),
            ("its mean error there %", "train_error_pct_mean", "{:.2f}", None),
            ("held-out sequences", "n_sequences", "{:.0f}", None),
            ("held-out mean error %", "error_pct_mean", "{:.2f}", None),
        ],
    },
    "yale_grouped": {
        "csv": "yale_grouped_table", "where": {"scope": "scored groups"},
        "index": ["scope", "n_subjects"],
        "columns": [
            ("Yale B, groups 2-4 (error %)", "n_subjects", "{} subjects", None),
            ("combinations", "n_trials", "{:.0f}", {"method": "kssc_selected"}),
            *_versus_ssc_columns("ssc_tuned", "kssc_selected"),
            ("k-SSC defaults", "error_pct_mean", "{:.2f}", {"method": "kssc_generic"}),
            ("published SSC", published("yale_grouped", "kssc_selected"), "{:g}", None),
            ("k-SSC time (s)", "time_fit_s_mean", "{:.1f}", {"method": "kssc_selected"}),
            ("SSC time (s)", "time_fit_s_mean", "{:.1f}", {"method": "ssc_tuned"}),
        ],
    },
    "yale38": {
        "csv": "yale38_table", "index": ["method"],
        "columns": [
            ("Yale B, 38 subjects at once", "method", "{}", None),
            ("accuracy %", "accuracy_pct_mean", "{:.1f}", None),
            ("fit time", "time_fit_s_mean", "{:.1f} s", None),
        ],
    },
    "generic_selection": {
        "csv": "generic_selection_table", "where": {"union": "all"}, "index": ["method"],
        "columns": [
            ("candidate default", "method", "{}", None),
            ("mean error over the unions %", "error_pct_mean", "{:.2f}", None),
            ("chosen", "chosen", "{}", None),
        ],
    },
}


class BlockError(Exception):
    """A block that cannot be rendered (unknown name, missing CSV or column)."""


def _select(frame, where):
    for column, value in (where or {}).items():
        if column not in frame.columns:
            raise BlockError(f"no column {column!r}")
        allowed = value if isinstance(value, (list, tuple)) else [value]
        frame = frame[frame[column].astype(str).isin([str(v) for v in allowed])]
    return frame


def _format(fmt, value):
    values = value if isinstance(value, tuple) else (value,)
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in values):
        return MISSING
    return fmt(*values) if callable(fmt) else fmt.format(*values)


def render_block(spec, table, conf_dir=None):
    """The Markdown table of block `spec` from its summary table (a DataFrame)."""
    table = _select(table, spec.get("where"))
    index = list(spec["index"])
    if missing := [c for c in index if c not in table.columns]:
        raise BlockError(f"no column {missing[0]!r}")
    headers = [column[0] for column in spec["columns"]]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    keys = table[index].drop_duplicates()
    for _, key_row in keys.iterrows():
        key = key_row.to_dict()
        group = table[(table[index] == key_row.values).all(axis=1)]
        cells = []
        for header, source, fmt, within in spec["columns"]:
            rows = _select(group, within)
            if not callable(source) and source in index:
                value = key[source]
            elif callable(source):
                value = source(key, rows, conf_dir=conf_dir) if len(rows) else math.nan
            elif source not in table.columns:
                raise BlockError(f"no column {source!r} (column {header!r})")
            elif len(rows) > 1:
                raise BlockError(f"column {header!r}: {len(rows)} rows for {key}, expected one")
            else:
                value = rows[source].iloc[0] if len(rows) else math.nan
            if hasattr(value, "item"):
                value = value.item()
            cells.append(_format(fmt, value))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def render(text, results_dir=RESULTS_DIR, blocks=None, conf_dir=None):
    """(new text, {block: error}) with every block of `text` filled from `results_dir`.

    A block that cannot be rendered keeps its old content and is reported in the errors.
    """
    blocks = BLOCKS if blocks is None else blocks
    errors = {}

    def fill(match):
        name = match["name"]
        try:
            if name not in blocks:
                raise BlockError(f"no block {name!r} in experiments/readme.py")
            spec = blocks[name]
            if "table" in spec:
                table = spec["table"](results_dir)
            else:
                path = Path(results_dir) / f"{spec['csv']}.csv"
                if not path.exists():
                    raise BlockError(f"{path} missing")
                table = pd.read_csv(path)
            body = render_block(spec, table, conf_dir=conf_dir)
        except BlockError as error:
            errors[name] = str(error)
            return match.group(0)
        return match.group(1) + body + match.group(4)

    return BLOCK.sub(fill, text), errors


def stale_blocks(old, new):
    """Names of the blocks whose content differs between two texts."""
    before = {m["name"]: m["body"] for m in BLOCK.finditer(old)}
    return [m["name"] for m in BLOCK.finditer(new) if before.get(m["name"]) != m["body"]]


def write_atomic(path, text):
    """Write `text` to `path` through a temporary file in the same folder."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def update(readme=README, results_dir=RESULTS_DIR, check=False, blocks=None, conf_dir=None):
    """(stale block names, {block: error}); writes README only if not `check` and changed."""
    readme = Path(readme)
    old = readme.read_text(encoding="utf-8")
    new, errors = render(old, results_dir, blocks, conf_dir)
    stale = stale_blocks(old, new)
    if not check and new != old:
        write_atomic(readme, new)
    return stale, errors


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a block is stale or cannot be rendered")
    parser.add_argument("--results", default=str(RESULTS_DIR))
    parser.add_argument("--readme", help="the one file to fill (default: all of DOCUMENTS)")
    args = parser.parse_args(argv)
    stale, errors = [], {}
    for document in [args.readme] if args.readme else DOCUMENTS:
        found, failed = update(document, args.results, check=args.check)
        stale += found
        errors.update(failed)
    for name, error in errors.items():
        print(f"readme: block {name!r} not rendered: {error}", file=sys.stderr)
    if args.check:
        for name in stale:
            print(f"readme: block {name!r} is stale (python -m experiments.readme)",
                  file=sys.stderr)
        return 1 if stale or errors else 0
    print(f"readme: {len(stale)} block(s) updated" + (f": {', '.join(stale)}" if stale else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
