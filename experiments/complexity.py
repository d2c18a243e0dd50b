"""Table:requirements and Figure:requirements (docs/protocol.md 3.13): FLOPs and memory of Z.

Pure arithmetic: FLOPs per iteration and floats held over a whole run, for SSC and kSSC,
exact and relaxed; memory in GB at 8 bytes per float and 1e9 bytes per GB (as the code).
"""

import numpy as np
import pandas as pd

from ._trial import Experiment

# method: (FLOPs per iteration, floats), with k = N for SSC
FORMULAS = {
    "ssc_exact": ("7N^2 + 4DN^2 + 4DN", "2N^2 + DN"),
    "ssc_relaxed": ("6N^2 + 4DN^2 + DN", "4N^2"),
    "kssc_exact": ("7kN + 4kDN + 4DN", "2kN + DN"),
    "kssc_relaxed": ("6kN + 4kDN + DN", "4kN"),
}


def requirements(method, N, D, k=None):
    """(FLOPs per iteration, floats) of Table:requirements; SSC ignores k (it is N)."""
    N = np.asarray(N, dtype=float)
    k = N if method.startswith("ssc") else np.asarray(k, dtype=float)
    if method.endswith("exact"):
        return 7 * k * N + 4 * k * D * N + 4 * D * N, 2 * k * N + D * N
    return 6 * k * N + 4 * k * D * N + D * N, 4 * k * N


def requirement_rows(exp, data_dir=None):
    """Every point of the three panels: grid "n_samples" (panels a, c) and "n_neighbors" (b)."""
    D, bytes_per_float = exp["ambient_dim"], exp["bytes_per_float"]
    rows = []

    def add(grid, method, N, k, k_pct=np.nan):
        flops, floats = requirements(method, N, D, k)
        rows.append({"grid": grid, "method": method, "n_samples": float(N), "ambient_dim": D,
                     "n_neighbors": np.nan if k is None else float(k), "n_neighbors_pct": k_pct,
                     "flops": float(flops), "n_floats": float(floats),
                     "memory_gb": float(floats) * bytes_per_float / 1e9})

    for N in np.linspace(0, exp["n_max"], exp["n_points"]):
        for method in ("ssc_exact", "ssc_relaxed"):
            add("n_samples", method, N, None)
        for k in exp["k_values"]:
            for method in ("kssc_exact", "kssc_relaxed"):
                add("n_samples", method, N, k)
    N = exp["relmem_n"]
    for i in range(11):
        k = i * (N - 1) / 10
        for method in FORMULAS:
            add("n_neighbors", method, N, None if method.startswith("ssc") else k, 10.0 * i)
    return pd.DataFrame(rows)


def requirements_table(frame, exp):
    """Table:requirements with its values at N = n_max for each k."""
    rows = []
    for method, (flops, floats) in FORMULAS.items():
        row = {"method": method, "flops_formula": flops, "floats_formula": floats,
               "ambient_dim": exp["ambient_dim"], "n_samples": exp["n_max"]}
        for k in exp["k_values"]:
            f, m = requirements(method, exp["n_max"], exp["ambient_dim"], k)
            row[f"flops_k{k}"] = float(f)
            row[f"memory_gb_k{k}"] = float(m) * exp["bytes_per_float"] / 1e9
        rows.append(row)
    return pd.DataFrame(rows)


EXPERIMENT = Experiment(compute=requirement_rows, summary=requirements_table)
