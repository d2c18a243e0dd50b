"""Figure:synthetic_dvsn (docs/protocol.md 3.1): SSC vs kSSC error over N_i x d, for three D.

Data as the code drew it (all five subspaces share a d/3-dimensional block, coefficients
U(-0.5, 0.5)); kSSC's k = min(round(1.5 d), round(N_i / 2)) per cell (the paper says 1.5 D).
"""

from kssc.datasets import make_dvsn_data

from ._trial import Experiment, data_seed, fit_methods, round_half_up, summarise_by


def neighbours_for(n_per_subspace, subspace_dim, factor=1.5):
    """kSSC's k in a cell: min(round(factor * d), round(N_i / 2)), MATLAB rounding."""
    return min(round_half_up(factor * subspace_dim), round_half_up(n_per_subspace / 2))


def tasks(exp, data_dir=None):
    return [({"ambient_dim": D, "n_per_subspace": n, "subspace_dim": d}, t)
            for t in range(exp["trials"]) for D in exp["ambient_dim"]
            for n in exp["n_per_subspace"] for d in exp["subspace_dim"]]


def trial(context, cell, trial, seed):
    exp = context["experiment"]
    X, y = make_dvsn_data(cell["ambient_dim"], cell["subspace_dim"], cell["n_per_subspace"],
                          n_subspaces=exp["n_subspaces"], random_state=data_seed(seed))
    k = neighbours_for(cell["n_per_subspace"], cell["subspace_dim"], exp["k_dim_factor"])
    rows = fit_methods(context, X, y, seed, params={"kssc": {"n_neighbors": k}})
    for row in rows:
        row["n_neighbors"] = k if row["method"] == "kssc" else None
        row["n_samples"] = len(y)
    return rows


EXPERIMENT = Experiment(tasks=tasks, trial=trial,
                        summary=summarise_by("ambient_dim", "n_per_subspace", "subspace_dim"))
