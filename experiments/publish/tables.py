"""Table specs turned into DataFrames of formatted cells (rendered by `markdown.table`).

A named table (`feeds.tables.<name>`, or `tables.yaml`) reads `csv` (results/<csv>.csv; or
`sidecars: true`, one row per experiment sidecar), keeps the rows `where` says (column ->
value or list of values), makes one Markdown row per distinct `index` key, and has one cell
per entry of `columns`: `header`, its source and `format`. Sources: `value` (a column),
`values` (several columns, one format), `interval` (`<base>_mean` with its 95 % bootstrap
interval `_ci_low`, `_ci_high`), `vs_ssc` (the paired difference to SSC,
`<base>_vs_ssc_mean`, `_low`, `_high`), `published` (the threshold of the owner's claim
on that method), `paper` (the owner's `feeds.table.paper` value for the row's method).
`within` picks, in the row group, the one CSV row the cell reads. `format` is a str.format
pattern, `label` (the method's name), `megabytes` or a mapping; intervals take `digits` and
`sign`. A missing value renders as "-".

The REPORT table of an experiment (`feeds.table`) is `summary`: a cells x methods pivot of
one value, or chosen columns with the paper's numbers beside them.
"""

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from .._format import interval
from ..conventions import label, ordered_methods

MISSING = "-"


class TableError(Exception):
    """A table that cannot be built (unknown name, missing CSV or column)."""


def sidecars(results_dir):
    """One row per experiment with results: the profile, trials, wall time, revision and
    processor of the run that wrote them (from its sidecar, results/<name>.meta.json)."""
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
                     "revision": (meta.get("git_revision") or "?")[:7],
                     "processor": (meta.get("machine") or {}).get("cpu") or "not recorded"})
    if not rows:
        raise TableError(f"no sidecar in {results_dir}")
    return pd.DataFrame(rows)


def _select(frame, where):
    for column, value in (where or {}).items():
        if column not in frame.columns:
            raise TableError(f"no column {column!r}")
        allowed = value if isinstance(value, (list, tuple)) else [value]
        frame = frame[frame[column].astype(str).isin([str(v) for v in allowed])]
    return frame


def _published(feeds, method, key, value="error_pct_mean"):
    for claim in feeds.get("claims") or []:
        params = claim.get("params") or {}
        where = dict(params.get("where") or {})
        if where.pop("method", None) != method or params.get("value") != value:
            continue
        if "threshold" in params and all(str(key.get(c)) == str(v) for c, v in where.items()):
            return params["threshold"]
    return math.nan


def _paper(feeds, value, key):
    for row in (feeds.get("table") or {}).get("paper") or []:
        if str(row.get("method")) == str(key.get("method")) and value in row:
            return row[value]
    return math.nan


def _value(column, key, rows, table, feeds):
    """The raw value (or tuple) of one cell."""
    if "published" in column:
        return _published(feeds, column["published"], key) if len(rows) else math.nan
    if "paper" in column:
        return _paper(feeds, column["paper"], key) if len(rows) else math.nan
    if "interval" in column or "vs_ssc" in column:
        base = column.get("interval") or column["vs_ssc"]
        names = ([f"{base}_mean", f"{base}_ci_low", f"{base}_ci_high"] if "interval" in column
                 else [f"{base}_vs_ssc_{end}" for end in ("mean", "low", "high")])
    else:
        names = column.get("values") or [column["value"]]
    if len(names) == 1 and names[0] in key:
        return key[names[0]]
    if missing := [n for n in names if n not in table.columns]:
        raise TableError(f"no column {missing[0]!r} (column {column['header']!r})")
    if len(rows) > 1:
        raise TableError(f"column {column['header']!r}: {len(rows)} rows for {key}, "
                         "expected one")
    if not len(rows):
        return math.nan
    values = tuple(rows[n].iloc[0] for n in names)
    return values if len(values) > 1 else values[0]


def _cell(column, value):
    values = value if isinstance(value, tuple) else (value,)
    values = tuple(v.item() if hasattr(v, "item") else v for v in values)
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in values):
        return MISSING
    fmt = column.get("format", "{}")
    if "interval" in column or "vs_ssc" in column:
        sign = column.get("sign", "vs_ssc" in column)
        return interval(*values, fmt=f"{{:.{column.get('digits', 2)}f}}", sign=sign)
    if isinstance(fmt, dict):
        return fmt.get("map", fmt).get(values[0])
    if fmt == "label":
        return label(values[0])
    if fmt == "megabytes":
        return f"{values[0] / 1e6:,.0f} MB"
    return fmt.format(*values)


def named(spec, results_dir):
    """The DataFrame of a named table spec, read from `results_dir`."""
    if spec.get("sidecars"):
        table = sidecars(results_dir)
    else:
        path = Path(results_dir) / f"{spec['csv']}.csv"
        if not path.exists():
            raise TableError(f"{path} missing")
        table = pd.read_csv(path)
    table = _select(table, spec.get("where"))
    index = list(spec["index"])
    if missing := [c for c in index if c not in table.columns]:
        raise TableError(f"no column {missing[0]!r}")
    body = []
    for _, key_row in table[index].drop_duplicates().iterrows():
        key = key_row.to_dict()
        group = table[(table[index] == key_row.values).all(axis=1)]
        body.append([_cell(column, _value(column, key, _select(group, column.get("within")),
                                          table, spec.get("feeds") or {}))
                     for column in spec["columns"]])
    return pd.DataFrame(body, columns=[column["header"] for column in spec["columns"]])


def formatted(frame, floatfmt="{:.2f}"):
    """Every cell as text: floats by `floatfmt`, whole-number columns without decimals,
    |v| >= 1e6 in exponent notation, missing as ''."""
    whole = {c for c in frame.columns if pd.api.types.is_float_dtype(frame[c])
             and np.all(np.mod(frame[c].dropna(), 1) == 0) and frame[c].notna().any()
             and frame[c].abs().max() >= 1}

    def cell(column, v):
        if isinstance(v, (float, np.floating)):
            if np.isnan(v):
                return ""
            if not np.isfinite(v):
                return str(v)
            if abs(v) >= 1e6:
                return f"{v:.3e}"
            return str(int(v)) if column in whole else floatfmt.format(v)
        return str(v)

    return pd.DataFrame({str(c): [cell(c, v) for v in frame[c]] for c in frame.columns})


def _with_intervals(table, shown, columns, fmt):
    """`shown` with, after each `<base>_mean` column whose interval the table holds, its 95 %
    bootstrap interval and the paired difference to SSC with its interval."""
    out = shown.copy()
    for column in [c for c in columns if c.endswith("_mean")]:
        base = column.removesuffix("_mean")
        if f"{base}_ci_low" not in table:
            continue
        after = out.columns.get_loc(f"{column} (paper)" if f"{column} (paper)" in out
                                    else column) + 1
        ends = [table[f"{base}_{end}"] for end in ("ci_low", "ci_high")]
        out.insert(after, f"{column} 95 % interval",
                   [interval(None, lo, hi, fmt) for lo, hi in zip(*ends, strict=True)])
        if f"{base}_vs_ssc_mean" not in table:  # no SSC beside it (the panel, predict)
            continue
        vs = [table[f"{base}_vs_ssc_{end}"] for end in ("mean", "low", "high")]
        out.insert(after + 1, f"{base} minus SSC",
                   [interval(m, math.nan, math.nan, fmt, sign=True) for m in vs[0]])
        out.insert(after + 2, f"{base} minus SSC 95 % interval",
                   [interval(None, lo, hi, fmt, sign=True) for lo, hi in zip(*vs[1:], strict=True)])
    return out


def _pivot(table, spec, fmt):
    values, base = spec["values"], spec["values"].removesuffix("_mean")
    columns = spec.get("columns", "method")
    if values.endswith("_mean") and f"{base}_ci_low" in table:
        table = table.assign(**{values: [
            interval(m, lo, hi, fmt) or fmt.format(m) for m, lo, hi in
            zip(table[values], table[f"{base}_ci_low"], table[f"{base}_ci_high"], strict=True)]})
        wide = table.pivot(index=spec["index"], columns=columns, values=values)
        wide = wide.reindex(table[spec["index"]].drop_duplicates().set_index(spec["index"]).index)
    else:
        wide = table.pivot_table(index=spec["index"], columns=columns, values=values, sort=False)
    wide = wide[ordered_methods(table["method"])]
    wide.columns = [label(c) for c in wide.columns]
    if f"{base}_vs_ssc_mean" in table and "kssc" in set(table["method"]):
        ours = table[table["method"] == "kssc"].set_index(spec["index"])
        wide[f"{label('kssc')} minus SSC [95 %]"] = [
            interval(m, lo, hi, fmt, sign=True) for m, lo, hi in
            zip(*(ours[f"{base}_vs_ssc_{c}"].reindex(wide.index) for c in ("mean", "low", "high")),
                strict=True)]
    if "psnr_code_mean" in table:
        psnr = table.groupby(spec["index"])["psnr_code_mean"].mean().round(0)
        wide.insert(0, "PSNR (code)", psnr.reindex(wide.index))
    return wide.reset_index()


def summary(table, spec, fmt="{:.2f}"):
    """An experiment's summary table as its `feeds.table` asks, cells formatted: a pivot of
    one value (a mean shows 'mean [low, high]'), or chosen columns with the paper's numbers
    beside them, each mean followed by its interval and its paired difference to SSC."""
    if "index" in spec:
        return formatted(_pivot(table, spec, fmt), fmt)
    shown = table[[c for c in spec["columns"] if c in table]] if "columns" in spec else table
    if "paper" in spec:
        shown = shown.merge(pd.DataFrame(spec["paper"]), on="method", how="left",
                            suffixes=("", " (paper)"))
        order = []
        for column in shown.columns.intersection(spec["columns"], sort=False):
            order += [column] + ([f"{column} (paper)"] if f"{column} (paper)" in shown else [])
        shown = shown[order]
    if "columns" in spec:
        shown = _with_intervals(table.reset_index(drop=True), shown.reset_index(drop=True),
                                spec["columns"], fmt)
    if "method" in shown:
        shown = shown.assign(method=shown["method"].map(label))
    return formatted(shown, fmt)
