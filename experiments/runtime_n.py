"""Figure:runtime_wrt_N (docs/protocol.md 3.10): time to build Z vs N for the six solvers.

SSC exact and relaxed (global), their column-parallel variants, and kSSC exact and relaxed
(k = 6), one run per size, trials strictly serial so timings are undisturbed. The time
plotted is `time_representation` (neighbour search + coefficients; the paper's tic/toc
excluded N-Cut); `time_fit` is the whole fit. Every method is fitted once, untimed, on a
small slice first (warm-up).
"""

from kssc.datasets import make_runtime_data

from ._runner import data_seed, fit_method, fit_methods, check_config, run_experiment

WARM_UP_POINTS = 60


def runtime_data(exp, n_per_subspace, seed):
    return make_runtime_data(n_per_subspace, ambient_dim=exp["ambient_dim"],
                             subspace_dim=exp["subspace_dim"], n_subspaces=exp["n_subspaces"],
                             mean=exp["mean"], var=exp["var"], noise=exp["noise"],
                             random_state=data_seed(seed))[:2]


def warm_up(name, method_cfg, X, y, **params):
    """One untimed fit on a small slice: imports, caches and worker pools get started."""
    take = slice(0, len(y), max(1, len(y) // WARM_UP_POINTS))
    fit_method(name, method_cfg, X[take], y[take], n_clusters=len(set(y[take])), random_state=0,
               **params)


def tasks(exp):
    return [({"n_per_subspace": n}, t) for t in range(exp.trials) for n in exp.n_per_subspace]


def trial(context, cell, trial, seed):
    exp = context["experiment"]
    X, y = runtime_data(exp, cell["n_per_subspace"], seed)
    for name, method_cfg in context["methods"].items():
        warm_up(name, method_cfg, X, y)
    rows = fit_methods(context, X, y, seed)
    for row in rows:
        row.update(N=len(y), D=exp["ambient_dim"])
    return rows


def run(cfg, **kwargs):
    cfg = check_config(cfg)
    return run_experiment(cfg, tasks(cfg.experiment), trial, **kwargs)
