"""`python -m experiments.report [--results results]`: write results/REPORT.md from the CSVs.

One section per experiment that declares `feeds` in its config, in `feeds.order`: where
its results come from (from the sidecar), its summary table (with the paper's numbers
beside ours where the config gives them), and each claim with the rule, what we observed
and the verdict (`claims.py` computes; this module only renders). Nothing is recomputed,
and the report carries no generation time: unchanged results give an unchanged file.
"""

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from omegaconf import OmegaConf

from . import _io
from .claims import Verdict, evaluate
from .conventions import label, ordered_methods

CONF_DIR = Path(__file__).resolve().parent.parent / "conf" / "experiment"
VERDICT_TEXT = {Verdict.HOLDS: "**holds**", Verdict.FAILS: "**does not hold**",
                Verdict.INCONCLUSIVE: "**inconclusive**", Verdict.NOT_RUN: "not run"}


def declared_sections(conf_dir=CONF_DIR):
    """[(experiment, feeds)] of every config with `feeds`, in report order."""
    sections = []
    for path in sorted(Path(conf_dir).glob("*.yaml")):
        conf = OmegaConf.to_container(OmegaConf.load(path))
        if conf.get("feeds"):
            sections.append((conf["experiment"]["name"], conf["feeds"]))
    return sorted(sections, key=lambda item: (item[1].get("order", 1000), item[0]))


def markdown_table(frame, floatfmt="{:.2f}"):
    """A DataFrame as a Markdown table (whole numbers without decimals)."""
    cols = list(frame.columns)
    whole = {c for c in cols if pd.api.types.is_float_dtype(frame[c])
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

    lines = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    for i in range(len(frame)):
        lines.append("| " + " | ".join(cell(c, frame[c].iloc[i]) for c in cols) + " |")
    return "\n".join(lines)


def provenance(meta):
    """One line on where a CSV came from, from its sidecar."""
    config = meta.get("config", {})
    trials = config.get("experiment", {}).get("trials", "-")
    profile = config.get("profile", {}).get("name", "?")
    return (f"_profile `{profile}`, trials per cell {trials}, "
            f"wall time {meta.get('wall_time_s', 0):.0f} s, "
            f"{meta.get('cpu_count')} cores, git {str(meta.get('git_revision'))[:10]}, "
            f"fingerprint {meta.get('fingerprint', 'none')}._")


def shown_table(table, spec):
    """The summary table as the config's `feeds.table` asks: a cells x methods pivot of one
    value, or chosen columns with the paper's numbers beside them."""
    if "index" in spec:
        wide = table.pivot_table(index=spec["index"], columns=spec.get("columns", "method"),
                                 values=spec["values"], sort=False)
        wide = wide[ordered_methods(table["method"])]
        wide.columns = [label(c) for c in wide.columns]
        if "psnr_code_mean" in table:
            psnr = table.groupby(spec["index"])["psnr_code_mean"].mean().round(0)
            wide.insert(0, "PSNR (code)", psnr.reindex(wide.index))
        return wide.reset_index()
    shown = table[[c for c in spec["columns"] if c in table]] if "columns" in spec else table
    if "paper" in spec:
        paper = pd.DataFrame(spec["paper"])
        shown = shown.merge(paper, on="method", how="left", suffixes=("", " (paper)"))
        order = []
        for column in shown.columns.intersection(spec["columns"], sort=False):
            order += [column] + ([f"{column} (paper)"] if f"{column} (paper)" in shown else [])
        shown = shown[order]
    if "method" in shown:
        shown = shown.assign(method=shown["method"].map(label))
    return shown


def failures(frame):
    if frame is None or "failed" not in frame:
        return []
    counts = frame.groupby("method")["failed"].agg(["sum", "count"])
    failed = counts[counts["sum"] > 0]
    if failed.empty:
        return ["- Failed runs: none."]
    parts = [f"{label(m)} {int(r['sum'])}/{int(r['count'])}" for m, r in failed.iterrows()]
    reasons = frame.loc[frame["failed"], "failure"].value_counts().head(3)
    return ["- Failed runs (error NaN, left out of the statistics): " + ", ".join(parts)
            + ". Most common: " + "; ".join(f"`{r}` ({n})" for r, n in reasons.items()) + "."]


def render_claim(claim, outcome):
    rule = f" Rule: {outcome.rule}." if outcome.rule else ""
    if outcome.verdict is Verdict.INFO:
        return f"- {claim['text'][0].upper()}{claim['text'][1:]}: {outcome.observed}."
    return (f"- Claim: {claim['text']}.{rule} Ours: {outcome.observed} -> "
            f"{VERDICT_TEXT[outcome.verdict]}.")


def section(results, name, feeds):
    """The Markdown lines of one experiment's section."""
    out = [f"## {feeds['title']}", ""]
    meta = _io.read_meta(results, name)
    if meta is None or not (results / f"{name}.csv").exists():
        return out + ["Not run."]
    out += [provenance(meta), ""]
    if feeds.get("note"):
        out += [feeds["note"], ""]
    table = _io.read_results(results, f"{name}_table")
    if table is not None and feeds.get("table") is not None:
        spec = feeds["table"]
        groups = [(None, table)]
        if "paper" in spec and "variant" in table:
            groups = list(table.groupby("variant", sort=False))
        for group, part in groups:
            if group is not None:
                out += [f"### variant `{group}`", ""]
                part = part.drop(columns="variant")
            if spec.get("caption"):
                out += [f"{spec['caption']}:", ""]
            out += [markdown_table(shown_table(part, spec), spec.get("format", "{:.2f}")), ""]
    raw = _io.read_results(results, name)
    for claim in feeds.get("claims") or []:
        source = claim.get("csv", f"{name}_table")
        frame = raw if source == name else _io.read_results(results, source)
        out.append(render_claim(claim, evaluate(claim, frame, trials=raw)))
    return out + failures(raw)


def write_report(results_dir="results"):
    results = Path(results_dir)
    intro = (f"Generated by `python -m experiments.report` from `{results.name}/*.csv`; each "
             "section says where its results come from (profile, trials, revision: from the "
             "CSV's sidecar). Errors are SCE in %; failed runs are counted, not scored. Verdict "
             "rules are stated with each claim.")
    parts = ["# Reproduction report: k-SSC (Tierney, Guo, Gao)", "", intro, ""]
    for name, feeds in declared_sections():
        parts += section(results, name, feeds) + [""]
    text = "\n".join(parts)
    _io.write_text(text, results / "REPORT.md")
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default="results")
    args = parser.parse_args(argv)
    write_report(args.results)
    print(f"wrote {Path(args.results) / 'REPORT.md'}")


if __name__ == "__main__":
    main()
