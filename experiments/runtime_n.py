"""Figure:runtime_wrt_N (docs/protocol.md 3.10): time to build Z vs N for the six solvers.

SSC exact and relaxed (global), their column-parallel variants, and kSSC exact and relaxed
(k = 6), one run per size, trials strictly serial so timings are undisturbed. The time
plotted is `time_representation_s` (neighbour search + coefficients; the paper's tic/toc
excluded N-Cut); `time_fit_s` is the whole fit. Every method is fitted once, untimed, on a
small slice first (warm-up).
"""

from kssc.datasets import make_runtime_data

from ._trial import Experiment, data_seed, fit_methods, summarise_by, warm_up


def tasks(exp, data_dir=None):
    return [({"n_per_subspace": n}, t) for t in range(exp["trials"]) for n in exp["n_per_subspace"]]


def trial(context, cell, trial, seed):
    exp = context["experiment"]
    X, y = make_runtime_data(cell["n_per_subspace"], ambient_dim=exp["ambient_dim"],
                             subspace_dim=exp["subspace_dim"], n_subspaces=exp["n_subspaces"],
                             mean=exp["mean"], var=exp["var"], noise=exp["noise"],
                             random_state=data_seed(seed))[:2]
    for name, method_cfg in context["methods"].items():
        warm_up(name, method_cfg, X, y)
    rows = fit_methods(context, X, y, seed)
    for row in rows:
        row.update(n_samples=len(y), ambient_dim=exp["ambient_dim"])
    return rows


EXPERIMENT = Experiment(tasks=tasks, trial=trial, summary=summarise_by("n_samples"))
