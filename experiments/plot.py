"""Draw every figure from the results CSVs only.

Usage: `python -m experiments.plot [--results R] [--figures F]`.

Which figures exist, and what each draws, is data: the `feeds.figures` list of each
experiment's config (`conf/experiment/<name>.yaml`, read by `publish.feeds.figures`), each
entry a panel of a figure with a `kind` (one drawing function below) and its parameters. A
figure fed by several experiments (tir_motion_time: TIR and Hopkins) gathers their panels in
`panel` order. One PNG and one PDF per figure, named after the paper's label; a figure whose
CSVs are missing is skipped with a note. The files carry no dates, so redrawing unchanged
results changes no byte.

Corrections of the authors' plotting code: PSNR tick labels are round(mean code-PSNR per
level) computed from our data, large_results has N_i ticks 100, 1000, ..., 4000 and the
TSC/SSSC legend the right way round, the intersection plot shows every t = 0..10.
"""

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from . import _io
from .conventions import label, ordered_methods, style
from .publish import feeds

SCE_LABEL = "Subspace Clustering Error (SCE) (%)"
# No creation date in the PDF and a fixed PNG text chunk: redrawn figures are byte-identical.
PDF_METADATA = {"CreationDate": None}
PNG_METADATA = {"Software": "matplotlib"}


def plot_by_method(ax, frame, x, y, *, fmt="-", suffix=""):
    """One line per method (its label, colour and marker), y against x, sorted by x."""
    for method in ordered_methods(frame["method"]):
        rows = frame[frame["method"] == method].sort_values(x)
        name, colour, marker = style(method)
        ax.plot(rows[x], rows[y], fmt + marker, color=colour, label=name + suffix)


def save(fig, figures_dir, name):
    figures_dir = Path(figures_dir)
    figures_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext, metadata in (("png", PNG_METADATA), ("pdf", PDF_METADATA)):
        path = figures_dir / f"{name}.{ext}"
        with _io.atomic_path(path) as tmp:
            fig.savefig(tmp, format=ext, dpi=150, bbox_inches="tight", metadata=metadata)
        paths.append(path)
    plt.close(fig)
    return paths


def with_psnr_positions(table, level="noise"):
    """The table with `position` 1..L per noise level, and the levels' tick labels
    round(mean code-PSNR) (half away from 0)."""
    means = table.groupby(level)["psnr_code_mean"].mean().sort_index()
    positions = {value: i + 1 for i, value in enumerate(means.index)}
    ticks = [str(int(np.floor(v + 0.5))) for v in means.values]
    return table.assign(position=table[level].map(positions)), ticks


def _psnr_axis(ax, ticks):
    ax.set_xticks(range(1, len(ticks) + 1))
    ax.set_xticklabels(ticks)
    ax.set_xlabel("PSNR")


# --------------------------------------------------------------------------- kinds
# Each kind draws one figure from its panels (their config entries) and the results folder.

def draw_lines(panels, results):
    [spec] = panels
    table = pd.read_csv(results / f"{spec['experiment']}_table.csv")
    fig, ax = plt.subplots(figsize=tuple(spec.get("size", (6, 4.5))))
    plot_by_method(ax, table, spec["x"], spec["y"])
    values = sorted(table[spec["x"]].unique())
    if spec.get("xticks") == "thousands":  # the first size, then every 1000
        values = [values[0]] + [t for t in range(1000, int(values[-1]) + 1, 1000) if t > values[0]]
    ax.set_xticks(values)
    ax.set(xlabel=spec["xlabel"], ylabel=spec["ylabel"], title=spec["title"])
    ax.legend(loc="upper left")
    return fig


def draw_error_panels(panels, results):
    [spec] = panels
    table, ticks = with_psnr_positions(pd.read_csv(results / f"{spec['experiment']}_table.csv"))
    fig, axes = plt.subplots(1, 4, figsize=(20, 4.5))
    captions = (("mean", "(a) Mean Error"), ("median", "(b) Median Error"),
                ("max", "(c) Max Error"), ("min", "(d) Min Error"))
    for ax, (stat, caption) in zip(axes, captions, strict=True):
        plot_by_method(ax, table, "position", f"error_pct_{stat}")
        _psnr_axis(ax, ticks)
        ax.set(ylabel=SCE_LABEL, ylim=(0, 100), title=caption)
        ax.legend(loc="upper left", fontsize=8)
    fig.suptitle(spec["title"])
    return fig


def draw_time_by_noise(panels, results):
    present = [p for p in panels if (results / f"{p['experiment']}_table.csv").exists()]
    fig, axes = plt.subplots(1, len(present), figsize=(6.5 * len(present), 4.5), squeeze=False)
    for ax, spec in zip(axes[0], present, strict=True):
        table, ticks = with_psnr_positions(pd.read_csv(results / f"{spec['experiment']}_table.csv"))
        plot_by_method(ax, table, "position", "time_paper_s_median")
        _psnr_axis(ax, ticks)
        ax.set(ylabel="Median Running Time (s)", title=spec["title"])
        ax.set_ylim(bottom=0)
        ax.legend(loc="upper left", fontsize=8)
    return fig


def draw_runtime_panels(panels, results):
    [spec] = panels
    table = pd.read_csv(results / f"{spec['experiment']}_table.csv")
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, methods, title in ((axes[0], spec["overall"], "All solvers"),
                               (axes[1], spec["zoomed"], "kSSC (zoomed)")):
        plot_by_method(ax, table[table["method"].isin(methods)], spec["x"], "time_paper_s_median")
        ax.set(xlabel=spec["xlabel"], ylabel="Running Time (s)", title=title)
        ax.set_xticks(sorted(table[spec["x"]].unique()))
        ax.legend(fontsize=8, loc="upper left")
    fig.suptitle(spec["title"].format(n_samples=int(table["n_samples"].iloc[0])))
    return fig


def draw_heatmaps(panels, results):
    [spec] = panels
    table = pd.read_csv(results / f"{spec['experiment']}_table.csv")
    panel_col, rows_col, cols_col = spec["panels"], spec["rows"], spec["columns"]
    values = sorted(table[panel_col].unique())
    if spec.get("panel_title") == "psnr":
        means = table.groupby(panel_col)["psnr_code_mean"].mean()
        titles = [f"PSNR {int(np.floor(means[v] + 0.5))}" + (" (noise-free)" if v == 0 else "")
                  for v in values]
    else:
        titles = [spec["panel_title"].format(value=v) for v in values]
    methods = ordered_methods(table["method"])
    fig, axes = plt.subplots(len(methods), len(values), squeeze=False, layout="constrained",
                             figsize=(4.2 * len(values) + 1, 4.2 * len(methods)))
    largest = table["error_pct_max"].max()
    vmax = max(float(largest), 1e-9) if np.isfinite(largest) else 1.0
    image = None
    for i, method in enumerate(methods):
        for j, value in enumerate(values):
            sel = table[(table["method"] == method) & (table[panel_col] == value)]
            grid = sel.pivot_table(index=rows_col, columns=cols_col, values="error_pct_mean")
            grid = grid.sort_index(ascending=False)
            ax = axes[i, j]
            image = ax.imshow(grid.values, vmin=0, vmax=vmax, cmap="viridis", aspect="auto")
            ax.set_xticks(range(grid.shape[1]))
            ax.set_xticklabels([f"{v:g}" for v in grid.columns], rotation=90, fontsize=7)
            ax.set_yticks(range(grid.shape[0]))
            ax.set_yticklabels([f"{v:g}" for v in grid.index], fontsize=7)
            ax.set(xlabel=spec["columns_label"], ylabel=spec["rows_label"])
            ax.set_title(f"({'abcdefghi'[i * len(values) + j]}) {label(method)}, {titles[j]}")
    fig.colorbar(image, ax=axes, shrink=0.8,
                 label="mean SCE (%), scale: 0 to the largest trial error")
    fig.suptitle(spec["title"])
    return fig


def draw_observation(panels, results):
    [spec] = panels
    frame = pd.read_csv(results / f"{spec['experiment']}.csv")
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    sv = frame[frame["panel"] == "singular_values"]
    if "last_motion" in sv:  # the code's figure: each sequence's last motion
        sv = sv[sv["last_motion"].astype(bool)]
    for group, rows in sv.groupby("group", sort=False):
        left.plot(rows["index"], rows["singular_value"], "-", label=str(group))
    left.set(xlabel="Singular Value Indices", ylabel="Singular Values")
    left.legend(fontsize=8)
    nb = frame[frame["panel"] == "neighbours"]
    agg = nb.groupby("n_neighbors").agg(tp=("tp_pct", "mean"), fp=("fp_pct", "mean"),
                                        sufficient=("sufficient_pct", "median"))
    right.plot(agg.index, agg["tp"], "b-", label="True Positives")
    right.plot(agg.index, agg["fp"], "r-", label="False Positives")
    right.plot(agg.index, agg["sufficient"], "g-", label="Sufficient True Positives")
    right.set_xlim(1, agg.index.max())
    right.set_ylim(-5, spec.get("ymax", 120))
    right.set(xlabel="k - Number of Nearest Neighbours", ylabel="Percentage (%)")
    twin = right.twinx()
    twin.set_ylim(right.get_ylim())
    twin.set_yticks([0, 100])
    twin.set_yticklabels(["False", "True"])
    right.legend(loc="center right", fontsize=8)
    fig.suptitle(spec["title"].format(n_groups=nb["group"].nunique()))
    return fig


def draw_requirements(panels, results):
    [spec] = panels
    frame = pd.read_csv(results / f"{spec['experiment']}.csv")
    by_n = frame[frame["grid"] == "n_samples"]
    D = int(frame["ambient_dim"].iloc[0])
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
    curves = {("ssc_exact", None): ("SSC Exact", "b", "-*"),
              ("ssc_relaxed", None): ("SSC Relaxed", "b", "-o")}
    k_colours = ["r", "k", "c", "y"]
    for i, k in enumerate(sorted(by_n["n_neighbors"].dropna().unique())):
        c = k_colours[i % len(k_colours)]
        curves[("kssc_exact", k)] = (f"kSSC Exact k = {k:g}", c, "-*")
        curves[("kssc_relaxed", k)] = (f"kSSC Relaxed k = {k:g}", c, "-o")
    for ax, column, ylabel, title in (
            (axes[0], "memory_gb", "Memory (GB)", f"(a) Memory w.r.t. Z, D = {D}"),
            (axes[2], "flops", "FLOP Count", f"(c) FLOPs w.r.t. Z per iteration, D = {D}")):
        for (method, k), (name, colour, fmt) in curves.items():
            sel = by_n[(by_n["method"] == method)
                       & ((by_n["n_neighbors"] == k) if k is not None else True)]
            ax.plot(sel["n_samples"], sel[column], fmt, color=colour, label=name)
        ax.set(xlabel="N", ylabel=ylabel, title=title)
        ax.legend(loc="upper left", fontsize=8)
    by_k = frame[frame["grid"] == "n_neighbors"]
    ax = axes[1]
    for method, (name, colour, fmt) in {"ssc_exact": ("SSC Exact", "b", "-*"),
                                        "ssc_relaxed": ("SSC Relaxed", "b", "-o"),
                                        "kssc_exact": ("kSSC Exact", "r", "-*"),
                                        "kssc_relaxed": ("kSSC Relaxed", "r", "-o")}.items():
        sel = by_k[by_k["method"] == method]
        ax.plot(sel["n_neighbors_pct"], sel["memory_gb"], fmt, color=colour, label=name)
    ax.set(xlabel="k as percentage of N", ylabel="Memory (GB)",
           title=f"(b) Memory as k -> N, N = {int(by_k['n_samples'].iloc[0])}, D = {D}")
    ax.legend(loc="lower right", fontsize=8)
    return fig


SCALE_CURVES = {  # column -> label, marker
    "time_neighbours_s_median": ("neighbours", "o"),
    "time_coefficients_s_median": ("coefficients", "s"),
    "time_spectral_s_median": ("spectral (with the affinity)", "d"),
    "time_fit_s_median": ("total", "^"),
}


def draw_scale(panels, results):
    [spec] = panels
    table = pd.read_csv(results / f"{spec['experiment']}_table.csv")
    table = table[table["n_trials"] > table["n_failed"]]
    methods = ordered_methods(table["method"])
    fig, (ax_time, ax_mem) = plt.subplots(1, 2, figsize=(11, 4.5))
    for method in methods:
        rows = table[table["method"] == method].sort_values("n_samples")
        tag = f" ({label(method)})" if len(methods) > 1 else ""
        for column, (name, marker) in SCALE_CURVES.items():
            ax_time.loglog(rows["n_samples"], rows[column], "-" + marker, label=name + tag)
        ax_mem.loglog(rows["n_samples"], rows["rss_peak_gib_median"], "-o", label="peak RSS" + tag)
    ax_time.set(xlabel="N (points)", ylabel="Running Time (s)", title="kSSC time per stage")
    ax_mem.set(xlabel="N (points)", ylabel="GiB", title="Peak resident memory (input included)")
    for ax in (ax_time, ax_mem):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
    if len(table):
        fig.suptitle(spec["title"].format(n_min=table["n_samples"].min(),
                                          n_max=table["n_samples"].max()))
    return fig


KINDS = {"lines": draw_lines, "error_panels": draw_error_panels,
         "time_by_noise": draw_time_by_noise,
         "runtime_panels": draw_runtime_panels, "heatmaps": draw_heatmaps,
         "observation": draw_observation, "requirements": draw_requirements, "scale": draw_scale}


def _sources(panel):
    """The CSV a panel reads: the summary table, or the raw CSV for the kinds without trials."""
    raw = panel["kind"] in ("observation", "requirements")
    return f"{panel['experiment']}.csv" if raw else f"{panel['experiment']}_table.csv"


def plot_all(results_dir="results", figures_dir="figures", only=None):
    """Draw every declared figure whose CSVs exist; returns {figure: [paths]}."""
    results = Path(results_dir)
    drawn = {}
    for figure, panels in feeds.figures().items():
        if only and figure not in only:
            continue
        present = [p for p in panels if (results / _sources(p)).exists()]
        if not present:
            print(f"skip {figure}: no {' or '.join(_sources(p) for p in panels)} in {results}",
                  file=sys.stderr)
            continue
        drawn[figure] = save(KINDS[present[0]["kind"]](present, results), figures_dir, figure)
    return drawn


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default="results")
    parser.add_argument("--figures", default="figures")
    parser.add_argument("--only", nargs="*", help="figures to draw (default: all)")
    args = parser.parse_args(argv)
    for figure, paths in plot_all(args.results, args.figures, args.only).items():
        print(f"{figure}: {', '.join(str(p) for p in paths)}")


if __name__ == "__main__":
    main()
