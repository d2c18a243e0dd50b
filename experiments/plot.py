"""Draw every figure from `results/*.csv` only: `python -m experiments.plot [--results results] [--figures figures]`.

One PNG and one PDF per paper figure (all its panels), named after the paper's label
(`figures/tir_results.{png,pdf}` ...), and `figures/scale` beyond the paper. A figure whose
CSV is missing is skipped with a note.
Corrections of the authors' plotting code: PSNR tick labels are round(mean code-PSNR per
level) computed from our data, large_results has N_i ticks 100, 1000, ..., 4000 and the
TSC/SSSC legend the right way round, the intersection plot shows every t = 0..10.
"""

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

METHOD_STYLE = {  # label, colour, marker (the paper's colours)
    "ssc": ("SSC", "m", "*"), "gfs": ("GFS", "b", "*"), "gsc": ("GSC", "r", "*"),
    "tsc": ("TSC", (1.0, 0.5, 0.0), "*"), "sssc": ("SSSC", "g", "*"), "kssc": ("kSSC", "k", "*"),
}
RUNTIME_STYLE = {  # docs/protocol.md 3.10
    "ssc_exact": ("SSC Exact", "b", "*"),
    "ssc_exact_par": ("SSC Exact (Column Parallel)", "b", "o"),
    "ssc_relaxed": ("SSC Relaxed", "g", "*"),
    "ssc_relaxed_par": ("SSC Relaxed (Column Parallel)", "g", "o"),
    "kssc_exact": ("kSSC Exact (Column Parallel)", "r", "*"),
    "kssc_relaxed": ("kSSC Relaxed (Column Parallel)", "k", "o"),
}
# Whose run time covers the whole pipeline: the paper timed SSSC end to end, the rest
# only while building Z.
FULL_PIPELINE_TIME = {"sssc"}
SCE_LABEL = "Subspace Clustering Error (SCE)"


def style(method):
    return METHOD_STYLE.get(method) or RUNTIME_STYLE.get(method) or (method, None, "*")


def paper_time(frame):
    """Run time as the paper measured it: Z construction, the whole fit for SSSC."""
    rep = frame["time_representation"].where(frame["time_representation"].notna(), frame["time_fit"])
    return rep.where(~frame["method"].isin(FULL_PIPELINE_TIME), frame["time_fit"])


def ordered_methods(frame, order):
    present = list(dict.fromkeys(frame["method"]))
    return [m for m in order if m in present] + [m for m in present if m not in order]


def save(fig, figures_dir, name):
    figures_dir = Path(figures_dir)
    figures_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in ("png", "pdf"):
        path = figures_dir / f"{name}.{ext}"
        tmp = path.with_name(f".{path.stem}.tmp.{ext}")
        fig.savefig(tmp, dpi=150, bbox_inches="tight")
        tmp.replace(path)
        paths.append(path)
    plt.close(fig)
    return paths


def psnr_ticks(frame, level="noise"):
    """Noise levels in order and their tick labels round(mean code-PSNR) (half away from 0)."""
    means = frame.groupby(level)["psnr_code"].mean().sort_index()
    return list(means.index), [str(int(np.floor(v + 0.5))) for v in means.values]


# --------------------------------------------------------------------------- figures

def plot_requirements(results, figures_dir):
    frame = pd.read_csv(results / "complexity.csv")
    by_n = frame[frame["grid"] == "N"]
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
    curve_styles = {("ssc_exact", None): ("SSC Exact", "b", "-*"),
                    ("ssc_relaxed", None): ("SSC Relaxed", "b", "-o")}
    k_colours = ["r", "k", "c", "y"]
    for i, k in enumerate(sorted(by_n["k"].dropna().unique())):
        c = k_colours[i % len(k_colours)]
        curve_styles[("kssc_exact", k)] = (f"kSSC Exact k = {k:g}", c, "-*")
        curve_styles[("kssc_relaxed", k)] = (f"kSSC Relaxed k = {k:g}", c, "-o")
    for ax, column, ylabel, title in (
            (axes[0], "memory_gb", "Memory (GB)", "(a) Memory w.r.t. Z, D = 500"),
            (axes[2], "flops", "FLOP Count", "(c) FLOPs w.r.t. Z per iteration, D = 500")):
        for (method, k), (label, colour, fmt) in curve_styles.items():
            sel = by_n[(by_n["method"] == method) & ((by_n["k"] == k) if k is not None else True)]
            ax.plot(sel["N"], sel[column], fmt, color=colour, label=label)
        ax.set_xlabel("N")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend(loc="upper left", fontsize=8)
    by_k = frame[frame["grid"] == "k"]
    ax = axes[1]
    for method, (label, colour, fmt) in {"ssc_exact": ("SSC Exact", "b", "-*"),
                                         "ssc_relaxed": ("SSC Relaxed", "b", "-o"),
                                         "kssc_exact": ("kSSC Exact", "r", "-*"),
                                         "kssc_relaxed": ("kSSC Relaxed", "r", "-o")}.items():
        sel = by_k[by_k["method"] == method]
        ax.plot(sel["k_percent"], sel["memory_gb"], fmt, color=colour, label=label)
    ax.set_xlabel("k as percentage of N")
    ax.set_ylabel("Memory (GB)")
    ax.set_title(f"(b) Memory as k -> N, N = {int(by_k['N'].iloc[0])}, D = 500")
    ax.legend(loc="lower right", fontsize=8)
    return save(fig, figures_dir, "requirements")


def plot_observation(results, figures_dir, name):
    frame = pd.read_csv(results / f"{name}.csv")
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    sv = frame[frame["panel"] == "singular_values"]
    if "last_motion" in sv:  # the code's figure: each sequence's last motion
        sv = sv[sv["last_motion"].astype(bool)]
    for group, rows in sv.groupby("group", sort=False):
        left.plot(rows["index"], rows["value"], "-", label=str(group))
    left.set_xlabel("Singular Value Indices")
    left.set_ylabel("Singular Values")
    left.legend(fontsize=8)
    nb = frame[frame["panel"] == "neighbours"]
    agg = nb.groupby("k").agg(tp=("tp_percent", "mean"), fp=("fp_percent", "mean"),
                              sufficient=("sufficient", "median"))
    right.plot(agg.index, agg["tp"], "b-", label="True Positives")
    right.plot(agg.index, agg["fp"], "r-", label="False Positives")
    right.plot(agg.index, agg["sufficient"], "g-", label="Sufficient True Positives")
    right.set_xlim(1, agg.index.max())
    right.set_ylim(-5, 140 if name.startswith("hopkins") else 120)
    right.set_xlabel("k - Number of Nearest Neighbours")
    right.set_ylabel("Percentage (%)")
    twin = right.twinx()
    twin.set_ylim(right.get_ylim())
    twin.set_yticks([0, 100])
    twin.set_yticklabels(["False", "True"])
    right.legend(loc="center right", fontsize=8)
    n_groups = nb["group"].nunique()
    dataset = ("Extended Yale B" if name.startswith("yale")
               else f"Hopkins 155 ({n_groups} sequences, mean TP/FP, median 'sufficient')")
    fig.suptitle(f"{dataset}: singular values and nearest neighbour true/false positives (exact kNN)")
    return save(fig, figures_dir, name)


def _runtime_panels(frame, x, xlabel, overall, zoomed, figures_dir, name, title):
    frame = frame.assign(time=paper_time(frame))
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, methods in ((axes[0], overall), (axes[1], zoomed)):
        for method in [m for m in methods if m in set(frame["method"])]:
            rows = frame[frame["method"] == method].groupby(x)["time"].median()
            label, colour, marker = RUNTIME_STYLE[method]
            ax.plot(rows.index, rows.values, "-" + marker, color=colour, label=label)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("Running Time (s)")
        ax.set_xticks(sorted(frame[x].unique()))
        ax.legend(fontsize=8, loc="upper left")
    axes[0].set_title("All solvers")
    axes[1].set_title("kSSC (zoomed)")
    fig.suptitle(title)
    return save(fig, figures_dir, name)


def plot_runtime_n(results, figures_dir):
    frame = pd.read_csv(results / "runtime_n.csv")
    return _runtime_panels(frame, "N", "N", list(RUNTIME_STYLE), ["kssc_exact", "kssc_relaxed"],
                           figures_dir, "runtime_wrt_N", "Running time of building Z with increasing N")


def plot_runtime_cores(results, figures_dir):
    frame = pd.read_csv(results / "runtime_cores.csv")
    return _runtime_panels(frame, "cores", "Number of Processing Cores/Threads",
                           ["ssc_exact_par", "ssc_relaxed_par", "kssc_exact", "kssc_relaxed"],
                           ["kssc_exact", "kssc_relaxed"], figures_dir, "runtime_wrt_cores",
                           f"Running time with increasing cores (N = {int(frame['N'].iloc[0])})")


def _heatmaps(frame, panel_col, panel_values, panel_titles, row_col, col_col, rows_label,
              cols_label, methods, figures_dir, name, title):
    fig, axes = plt.subplots(len(methods), len(panel_values),
                             figsize=(4.2 * len(panel_values) + 1, 4.2 * len(methods)),
                             squeeze=False, layout="constrained")
    vmax = max(float(frame["error"].max()), 1e-9) if frame["error"].notna().any() else 1.0
    image = None
    for i, method in enumerate(methods):
        for j, value in enumerate(panel_values):
            sel = frame[(frame["method"] == method) & (frame[panel_col] == value)]
            grid = sel.pivot_table(index=row_col, columns=col_col, values="error", aggfunc="mean")
            grid = grid.sort_index(ascending=False)
            ax = axes[i, j]
            image = ax.imshow(grid.values, vmin=0, vmax=vmax, cmap="viridis", aspect="auto")
            ax.set_xticks(range(grid.shape[1]))
            ax.set_xticklabels([f"{v:g}" for v in grid.columns], rotation=90, fontsize=7)
            ax.set_yticks(range(grid.shape[0]))
            ax.set_yticklabels([f"{v:g}" for v in grid.index], fontsize=7)
            ax.set_xlabel(cols_label)
            ax.set_ylabel(rows_label)
            ax.set_title(f"({'abcdefghi'[i * len(panel_values) + j]}) {style(method)[0]}, {panel_titles[j]}")
    fig.colorbar(image, ax=axes, shrink=0.8, label="mean SCE (%), scale: 0 to the largest trial error")
    fig.suptitle(title)
    return save(fig, figures_dir, name)


def plot_dvsn(results, figures_dir):
    frame = pd.read_csv(results / "synthetic_dvsn.csv")
    dims = sorted(frame["ambient_dim"].unique())
    return _heatmaps(frame, "ambient_dim", dims, [f"D = {d}" for d in dims], "subspace_dim",
                     "n_per_subspace", "Subspace Dimension", "Cluster Size",
                     ordered_methods(frame, ["ssc", "kssc"]), figures_dir, "synthetic_dvsn",
                     "Effect of subspace dimension, cluster size and ambient dimension")


def plot_mv(results, figures_dir):
    frame = pd.read_csv(results / "synthetic_mv.csv")
    levels, labels = psnr_ticks(frame)
    titles = [f"PSNR {lab}" + (" (noise-free)" if lev == 0 else "") for lev, lab in zip(levels, labels)]
    return _heatmaps(frame, "noise", levels, titles, "mean", "var", "Mean", "Variance",
                     ordered_methods(frame, ["ssc", "kssc"]), figures_dir, "synthetic_mv",
                     "Effect of mean, variance and noise in subspace distribution")


def plot_intersection(results, figures_dir):
    frame = pd.read_csv(results / "synthetic_intersection.csv")
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for method in ordered_methods(frame, list(METHOD_STYLE)):
        rows = frame[frame["method"] == method].groupby("intersection_dim")["error"].mean()
        label, colour, marker = style(method)
        ax.plot(rows.index, rows.values, "-" + marker, color=colour, label=label)
    ax.set_xticks(sorted(frame["intersection_dim"].unique()))
    ax.set_xlabel("Dimension of Intersection")
    ax.set_ylabel(SCE_LABEL + " (%)")
    ax.set_title("Effect of subspace intersection")
    ax.legend(loc="upper left")
    return save(fig, figures_dir, "synthetic_intersection")


def _error_panels(frame, figures_dir, name, title):
    levels, labels = psnr_ticks(frame)
    fig, axes = plt.subplots(1, 4, figsize=(20, 4.5))
    for ax, (stat, caption) in zip(axes, (("mean", "(a) Mean Error"), ("median", "(b) Median Error"),
                                          ("max", "(c) Max Error"), ("min", "(d) Min Error"))):
        for method in ordered_methods(frame, list(METHOD_STYLE)):
            rows = frame[frame["method"] == method].groupby("noise")["error"].agg(stat)
            rows = rows.reindex(levels)
            label, colour, marker = style(method)
            ax.plot(range(1, len(levels) + 1), rows.values, "-" + marker, color=colour, label=label)
        ax.set_xticks(range(1, len(levels) + 1))
        ax.set_xticklabels(labels)
        ax.set_xlabel("PSNR")
        ax.set_ylabel(SCE_LABEL + " (%)")
        ax.set_ylim(0, 100)
        ax.set_title(caption)
        ax.legend(loc="upper left", fontsize=8)
    fig.suptitle(title)
    return save(fig, figures_dir, name)


def plot_tir(results, figures_dir):
    return _error_panels(pd.read_csv(results / "tir.csv"), figures_dir, "tir_results",
                         "Semi-synthetic Hyperspectral TIR")


def plot_hopkins(results, figures_dir):
    return _error_panels(pd.read_csv(results / "hopkins.csv"), figures_dir, "tir_results2",
                         "Rigid Motion Segmentation")


def plot_tir_motion_time(results, figures_dir):
    panels = [(n, t) for n, t in (("tir", "Thermal Infrared Data Segmentation"),
                                  ("hopkins", "Motion Segmentation"))
              if (results / f"{n}.csv").exists()]
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.5), squeeze=False)
    for ax, (name, title) in zip(axes[0], panels):
        frame = pd.read_csv(results / f"{name}.csv")
        frame = frame.assign(time=paper_time(frame))
        levels, labels = psnr_ticks(frame)
        for method in ordered_methods(frame, list(METHOD_STYLE)):
            rows = frame[frame["method"] == method].groupby("noise")["time"].median().reindex(levels)
            label, colour, marker = style(method)
            ax.plot(range(1, len(levels) + 1), rows.values, "-" + marker, color=colour, label=label)
        ax.set_xticks(range(1, len(levels) + 1))
        ax.set_xticklabels(labels)
        ax.set_xlabel("PSNR")
        ax.set_ylabel("Median Running Time (s)")
        ax.set_ylim(bottom=0)
        ax.set_title(title)
        ax.legend(loc="upper left", fontsize=8)
    return save(fig, figures_dir, "tir_motion_time")


def plot_large(results, figures_dir):
    frame = pd.read_csv(results / "tir_large.csv")
    frame = frame.assign(time=paper_time(frame))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for method in ordered_methods(frame, list(METHOD_STYLE)):  # legend labels follow the data
        rows = frame[frame["method"] == method].groupby("n_per_subspace")["time"].median()
        label, colour, marker = style(method)
        ax.plot(rows.index, rows.values, "-" + marker, color=colour, label=label)
    sizes = sorted(frame["n_per_subspace"].unique())
    ticks = [sizes[0]] + [t for t in range(1000, int(sizes[-1]) + 1, 1000) if t > sizes[0]]
    ax.set_xticks(ticks)
    ax.set_xlabel("Number of points per subspace N_i")
    ax.set_ylabel("Running Time (s)")
    ax.set_title("Running time of Large Scale Experiment")
    ax.legend(loc="upper left")
    return save(fig, figures_dir, "large_results")


SCALE_CURVES = {  # column -> label, marker
    "time_neighbours": ("neighbours", "o"), "time_coefficients": ("coefficients", "s"),
    "time_spectral": ("spectral (with the affinity)", "d"), "time_fit": ("total", "^"),
}


def plot_scale(results, figures_dir):
    frame = pd.read_csv(results / "scale.csv")
    frame = frame[~frame["failed"]]
    methods = ordered_methods(frame, list(METHOD_STYLE))
    fig, (ax_time, ax_mem) = plt.subplots(1, 2, figsize=(11, 4.5))
    for method in methods:
        rows = frame[frame["method"] == method].groupby("n_samples").median(numeric_only=True)
        tag = f" ({style(method)[0]})" if len(methods) > 1 else ""
        for column, (label, marker) in SCALE_CURVES.items():
            ax_time.loglog(rows.index, rows[column], "-" + marker, label=label + tag)
        ax_mem.loglog(rows.index, rows["rss_peak_gib"], "-o", label="peak RSS" + tag)
    ax_time.set(xlabel="N (points)", ylabel="Running Time (s)", title="kSSC time per stage")
    ax_mem.set(xlabel="N (points)", ylabel="GiB", title="Peak resident memory (input included)")
    for ax in (ax_time, ax_mem):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
    if len(frame):
        fig.suptitle(f"kSSC on N = {frame['n_samples'].min():,} to {frame['n_samples'].max():,} "
                     f"points in D = {frame['ambient_dim'].iloc[0]}, each fit in a fresh process")
    return save(fig, figures_dir, "scale")


FIGURES = {  # figure file -> (CSV files it needs, drawing function)
    "requirements": (("complexity",), plot_requirements),
    "yale_observation": (("yale_observation",), lambda r, f: plot_observation(r, f, "yale_observation")),
    "hopkins_observation": (("hopkins_observation",),
                            lambda r, f: plot_observation(r, f, "hopkins_observation")),
    "runtime_wrt_N": (("runtime_n",), plot_runtime_n),
    "runtime_wrt_cores": (("runtime_cores",), plot_runtime_cores),
    "synthetic_dvsn": (("synthetic_dvsn",), plot_dvsn),
    "synthetic_mv": (("synthetic_mv",), plot_mv),
    "synthetic_intersection": (("synthetic_intersection",), plot_intersection),
    "tir_results": (("tir",), plot_tir),
    "tir_motion_time": (("tir", "hopkins"), plot_tir_motion_time),
    "large_results": (("tir_large",), plot_large),
    "tir_results2": (("hopkins",), plot_hopkins),
    "scale": (("scale",), plot_scale),
}


def plot_all(results_dir="results", figures_dir="figures", only=None):
    """Draw every figure whose CSV exists; returns {figure: [paths]}."""
    results = Path(results_dir)
    drawn = {}
    for figure, (needs, draw) in FIGURES.items():
        if only and figure not in only:
            continue
        if not any((results / f"{n}.csv").exists() for n in needs):
            print(f"skip {figure}: no {' or '.join(f'{n}.csv' for n in needs)} in {results}",
                  file=sys.stderr)
            continue
        if figure != "tir_motion_time" and not all((results / f"{n}.csv").exists() for n in needs):
            continue
        drawn[figure] = draw(results, figures_dir)
    return drawn


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default="results")
    parser.add_argument("--figures", default="figures")
    parser.add_argument("--only", nargs="*", choices=list(FIGURES), help="figures to draw")
    args = parser.parse_args(argv)
    for figure, paths in plot_all(args.results, args.figures, args.only).items():
        print(f"{figure}: {', '.join(str(p) for p in paths)}")


if __name__ == "__main__":
    main()
