"""The synthetic gaps decomposed into named causes, from the authors' loops beside ours.

`python -m crosscheck.reconcile --output results/crosscheck_reconcile.csv --docs
docs/crosscheck.md` reads `results/crosscheck_authors_loops_{dvsn,mv}.csv`
(`crosscheck.authors_loops`) and the committed `results/synthetic_{dvsn,mv}.csv`, and splits
the committed mean gap k-SSC - SSC (points of error) of each experiment (mv: of each noise
level) into steps that telescope from our committed grid to the paper's match (gap 0):

1. `cells`: the whole committed grid -> the committed cells that were run in Octave;
2. `generator`: our generator -> theirs (our KSSC and SSC on both; unpaired data);
3. `implementation`: our KSSC / SSC -> their `kssc_relaxed_par` / `ssc_relaxed` + `ncutW` on
   the same data (paired); shown split into its k-SSC and SSC parts too;
4. `scoring`: their dvsn loop's 0 % for a k-SSC whose `ncutW` threw (D27);
5. `settings`: their code's settings -> the paper text's (dvsn k; mv d and N_i);
6. `unreconciled`: their loop at the paper text's settings against the paper's match.

Beside the sum (`in_sum` false): the implementation term's k-SSC and SSC parts; when
`results/crosscheck_kdtree.csv` (`crosscheck.kdtree`) covers every row, `neighbour_search`:
what VLFeat's approximate kd-tree instead of exact neighbours changes in our k-SSC's error;
and when `results/crosscheck_settings_grid.csv` (`crosscheck.settings_grid`) exists,
`settings_grid`: how much the paper text's k lowers our gap over the whole dvsn grid.

Each gap level is a mean over cells of the mean over trials; every term is the difference of
two consecutive levels, so the terms add up to the grid's gap in every bootstrap replicate.
Intervals: 95 % percentile bootstrap, trials resampled within each cell (paired rows
together), `n_boot` replicates.
"""

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from experiments import _produce
from experiments._io import now, write_text
from experiments.publish.reconcile import TERM_TEXT, markdown

from .environment import REPO_ROOT

CELLS = {"dvsn": ["ambient_dim", "n_per_subspace", "subspace_dim"],
         "mv": ["noise", "mean", "var"]}
LEVELS = ["grid", "cells", "ours_their_data", "theirs_unscored", "theirs", "theirs_paper"]
TERMS = {"cells": ("grid", "cells"),
         "generator": ("cells", "ours_their_data"),
         "implementation": ("ours_their_data", "theirs_unscored"),
         "scoring": ("theirs_unscored", "theirs"),
         "settings": ("theirs", "theirs_paper"),
         "unreconciled": ("theirs_paper", None)}
BLOCK = re.compile(r"(<!-- reconcile:begin -->\n).*?(<!-- reconcile:end -->)", re.S)


def trial_matrix(frame, cell_cols, cells, column):
    """(n_cells, n_trials) array of `column`, cells in `cells` order, trials in order.

    Only trials present in every cell are kept (a run stopped mid-round is cut back).
    """
    wide = frame.pivot_table(index=cell_cols, columns="trial", values=column,
                             aggfunc="first", dropna=False)
    keys = [tuple(c) for c in cells]
    wide = wide.reindex(pd.MultiIndex.from_tuples(keys, names=cell_cols) if len(cell_cols) > 1
                        else pd.Index([key[0] for key in keys], name=cell_cols[0]))
    complete = wide.columns[wide.notna().all(axis=0)]
    return wide[complete].to_numpy(dtype=float)


LOOP_COLUMNS = {"ours_their_data": "gap_ours", "theirs_unscored": "gap_theirs_unscored",
                "theirs": "gap_theirs", "implementation_kssc": "kssc_part",
                "implementation_ssc": "ssc_part", "neighbour_search": "kdtree_part",
                "theirs_paper": "gap_theirs_paper", "ours_paper": "gap_ours_paper"}


def loop_gaps(loops, cell_cols):
    """One row per (cell, trial) run through both: the gap of every loop level, the code
    variant's and the paper variant's columns side by side (trials with both only)."""
    code = loops[loops["variant"] == "code"].copy()
    paper = loops[loops["variant"] == "paper"].copy()
    # A k-SSC whose ncutW threw has no error of theirs: its unscored level takes ours.
    kssc_unscored = code["error_kssc_theirs"].fillna(code["error_kssc_ours"])
    code["gap_ours"] = code["error_kssc_ours"] - code["error_ssc_ours"]
    code["gap_theirs_unscored"] = kssc_unscored - code["error_ssc_theirs"]
    code["gap_theirs"] = code["error_kssc_theirs_scored"] - code["error_ssc_theirs"]
    code["kssc_part"] = code["error_kssc_ours"] - kssc_unscored
    code["ssc_part"] = code["error_ssc_theirs"] - code["error_ssc_ours"]
    if "error_kssc_ours_kdtree" in code:
        code["kdtree_part"] = code["error_kssc_ours_kdtree"] - code["error_kssc_ours_exact"]
    paper["gap_theirs_paper"] = paper["error_kssc_theirs_scored"] - paper["error_ssc_theirs"]
    paper["gap_ours_paper"] = paper["error_kssc_ours"] - paper["error_ssc_ours"]
    keys = [*cell_cols, "trial"]
    code_columns = [c for c in LOOP_COLUMNS.values() if c in code]
    both = code[[*keys, *code_columns]].merge(
        paper[[*keys, "gap_theirs_paper", "gap_ours_paper"]], on=keys)
    return both.dropna(subset=[c for c in both if c != "kdtree_part"])


def gap_arrays(committed, loops, cell_cols):
    """The per-trial gaps of every level: "grid" and "cells" (committed) as (n_cells, 50)
    arrays, the loop levels as lists of per-cell arrays over the same trials (paired).

    `committed`: the experiment's committed rows (method, error_pct, trial, cell columns);
    `loops`: the authors_loops rows of one experiment (both variants). The loops' cells
    may have different trial counts (a stopped run); the neighbour-search level is kept
    only when every row has it.
    """
    # Cell values read from two CSVs (0.3 vs 0.30000000000000004) must compare equal.
    committed = committed.assign(**{c: committed[c].round(6) for c in cell_cols})
    loops = loops.assign(**{c: loops[c].round(6) for c in cell_cols})
    wide = committed.pivot_table(index=[*cell_cols, "trial"], columns="method",
                                 values="error_pct").reset_index()
    wide["gap"] = wide["kssc"] - wide["ssc"]
    both = loop_gaps(loops, cell_cols)
    groups = [part.sort_values("trial") for _, part in both.groupby(cell_cols)]
    run_cells = [part[cell_cols].iloc[0].to_numpy() for part in groups]
    arrays = {"grid": trial_matrix(wide, cell_cols, wide[cell_cols].drop_duplicates().to_numpy(),
                                   "gap"),
              "cells": trial_matrix(wide, cell_cols, run_cells, "gap")}
    for level, column in LOOP_COLUMNS.items():
        if column in both and both[column].notna().all():
            arrays[level] = [part[column].to_numpy(dtype=float) for part in groups]
    return arrays


def mean_of_cells(cells):
    """The mean over cells of each cell's mean (cells weigh alike whatever their trials)."""
    return float(np.mean([cell.mean() for cell in cells]))


def level_means(arrays, committed_idx=None, loop_idx=None):
    """Mean over cells of the mean over trials, per level; optional resampled trial indices
    (`committed_idx`: a dict for "grid" and "cells"; `loop_idx`: one index array per cell,
    shared by the loop levels)."""
    means = {}
    for name, values in arrays.items():
        if name in ("grid", "cells"):
            idx = (committed_idx or {}).get(name)
            means[name] = float((values if idx is None
                                 else np.take_along_axis(values, idx, axis=1)).mean())
        else:
            means[name] = mean_of_cells(values if loop_idx is None else
                                        [cell[idx] for cell, idx in zip(values, loop_idx,
                                                                        strict=True)])
    return means


def terms_from_levels(means):
    """The telescoping terms (and the implementation's two parts) from the level means."""
    terms = {name: means[a] - (means[b] if b else 0.0) for name, (a, b) in TERMS.items()}
    terms["implementation_kssc"] = means["implementation_kssc"]
    terms["implementation_ssc"] = means["implementation_ssc"]
    if "neighbour_search" in means:
        terms["neighbour_search"] = means["neighbour_search"]
    return terms


def decompose(arrays, n_boot=2000, seed=0):
    """Rows (term, points, low, high, in_sum) of the decomposition with 95 % intervals.

    Each replicate resamples the trials of every cell with replacement: the committed grid's,
    the run cells' committed rows and the loops' independently (the run cells' committed
    rows are part of the grid, so this slightly overstates the `cells` term's spread), the
    loop levels of a cell with one index array (they are paired).
    """
    rng = np.random.default_rng(seed)
    point = terms_from_levels(level_means(arrays))
    lengths = [len(cell) for cell in arrays["theirs"]]
    replicates = []
    for _ in range(n_boot):
        committed_idx = {name: rng.integers(0, arrays[name].shape[1], size=arrays[name].shape)
                         for name in ("grid", "cells")}
        loop_idx = [rng.integers(0, n, size=n) for n in lengths]
        replicates.append(terms_from_levels(level_means(arrays, committed_idx, loop_idx)))
    boot = pd.DataFrame(replicates)
    return pd.DataFrame([{"term": name, "points": point[name],
                          "low": float(np.percentile(boot[name], 2.5)),
                          "high": float(np.percentile(boot[name], 97.5)),
                          "in_sum": name in TERMS} for name in TERM_TEXT if name in point])


def fit_facts(loops):
    """Counts and shares over the loop rows: failed ncutW (theirs), neighbour purity."""
    code = loops[loops["variant"] == "code"]
    facts = {"kssc_failed_theirs": int(loops["kssc_failed_theirs"].sum()),
             "ssc_failed_theirs": int(loops["error_ssc_theirs"].isna().sum()),
             "cross_neighbours_ours": float(code["cross_neighbours_ours"].mean()),
             "cross_neighbours_theirs": float(code["cross_neighbours_theirs"].mean())}
    for column in ("recall_kdtree", "cross_neighbours_kdtree"):
        if column in code and code[column].notna().all():  # as the neighbour-search term
            facts[column] = float(code[column].mean())
    return facts


def settings_grid_row(grid, n_boot=2000):
    """The paper text's k on the whole dvsn grid (`crosscheck.settings_grid`): the mean drop
    of our gap over cells, with a percentile bootstrap interval over cells (one trial each)."""
    drop = (grid["error_kssc_code"] - grid["error_kssc_paper"]).to_numpy(dtype=float)
    interval = stats.bootstrap((drop,), np.mean, n_resamples=n_boot, method="percentile",
                               random_state=0).confidence_interval
    return {"term": "settings_grid", "points": float(drop.mean()), "low": float(interval.low),
            "high": float(interval.high), "in_sum": False}


def reconcile(loops, committed, n_boot=2000, grid=None):
    """The decomposition rows of every experiment (mv: per noise level) found in `loops`;
    `grid`, the table of `crosscheck.settings_grid`, adds its row to dvsn's."""
    rows = []
    for experiment, part in loops.groupby("experiment"):
        cell_cols = CELLS[experiment]
        frame = committed[experiment]
        groups = ([("all", part, frame)] if experiment == "dvsn" else
                  [(f"noise {noise:g}", part[part["noise"] == noise],
                    frame[frame["noise"] == noise]) for noise in sorted(part["noise"].unique())])
        for group, loop_rows, committed_rows in groups:
            arrays = gap_arrays(committed_rows, loop_rows, cell_cols)
            table = decompose(arrays, n_boot)
            if experiment == "dvsn" and grid is not None:
                table = pd.concat([table, pd.DataFrame([settings_grid_row(grid, n_boot)])],
                                  ignore_index=True)
                table["grid_gap_code_k"] = float((grid.error_kssc_code - grid.error_ssc).mean())
                table["grid_gap_paper_k"] = float((grid.error_kssc_paper
                                                   - grid.error_ssc).mean())
            table.insert(0, "group", group)
            table.insert(0, "experiment", experiment)
            table["n_cells"] = len(arrays["theirs"])
            table["n_trials"] = sum(len(cell) for cell in arrays["theirs"])
            table["gap_grid"] = float(arrays["grid"].mean())
            table["gap_ours_paper"] = mean_of_cells(arrays["ours_paper"])
            table = table.assign(**fit_facts(loop_rows))
            rows.append(table)
    return pd.concat(rows, ignore_index=True)


def replace_block(text, block):
    """`text` with the part between the reconcile markers replaced by `block`."""
    if not BLOCK.search(text):
        raise ValueError("no '<!-- reconcile:begin -->' ... '<!-- reconcile:end -->' block found")
    return BLOCK.sub(lambda m: m.group(1) + block + "\n" + m.group(2), text)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m crosscheck.reconcile", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=REPO_ROOT / "results")
    parser.add_argument("--n-boot", type=int, default=2000)
    parser.add_argument("--output", type=Path, default=None)
    parser.add_argument("--docs", type=Path, default=None,
                        help="rewrite the reconcile block of this Markdown file")
    args = parser.parse_args(argv)
    started, clock = now(), time.perf_counter()
    loop_files = [args.results / f"crosscheck_authors_loops_{name}.csv" for name in ("dvsn", "mv")]
    loops = pd.concat([pd.read_csv(path) for path in loop_files], ignore_index=True)
    kdtree = args.results / "crosscheck_kdtree.csv"
    if kdtree.is_file():  # crosscheck.kdtree's columns, matched by (seed, variant)
        columns = ["seed", "variant", "error_kssc_ours_exact", "error_kssc_ours_kdtree",
                   "recall_kdtree", "cross_neighbours_kdtree"]
        loops = loops.merge(pd.read_csv(kdtree)[columns], on=["seed", "variant"], how="left")
    committed = {name: pd.read_csv(args.results / f"synthetic_{name}.csv")
                 for name in loops["experiment"].unique()}
    grid = args.results / "crosscheck_settings_grid.csv"
    inputs = [*loop_files, *(args.results / f"synthetic_{name}.csv" for name in committed)]
    config = {"experiment": {"name": "crosscheck_reconcile", "n_boot": args.n_boot,
                             "input_files": _produce.input_files(
                                 *inputs, *(path for path in (kdtree, grid) if path.is_file()))}}
    table = reconcile(loops, committed, args.n_boot,
                      pd.read_csv(grid) if grid.is_file() else None)
    if args.output is not None:
        _produce.write_result(table, args.output, config, started=started,
                              wall_time=time.perf_counter() - clock)
    block = markdown(table, loops)
    if args.docs is not None:
        write_text(replace_block(args.docs.read_text(), block), args.docs)
    print(block)
    return 0


if __name__ == "__main__":
    sys.exit(_produce.traced_main(main))
