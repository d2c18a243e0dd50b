"""Figure:large_results (docs/protocol.md 3.5): run time vs N_i on large TIR data.

d = 3 spectra per subspace, no noise, one run per size; SSC and GFS run only up to
N_i = 500 and GSC up to 1000 (as the code stopped them). Trials run serially.
"""

from kssc.datasets import make_tir_large, tir_spectra

from ._trial import Experiment, data_seed, fit_methods, summarise_by


def tasks(exp, data_dir=None):
    return [({"n_per_subspace": n}, t) for t in range(exp["trials"]) for n in exp["n_per_subspace"]]


def trial(context, cell, trial, seed):
    exp = context["experiment"]
    n = cell["n_per_subspace"]
    X, y = make_tir_large(tir_spectra(context["data_dir"]), n, n_subspaces=exp["n_subspaces"],
                          n_spectra=exp["n_spectra"], random_state=data_seed(seed))[:2]
    limits = exp.get("max_n_per_subspace") or {}
    skip = [name for name, limit in limits.items() if n > limit]
    rows = fit_methods(context, X, y, seed, skip=skip)
    for row in rows:
        row["n_samples"] = len(y)
    return rows


EXPERIMENT = Experiment(tasks=tasks, trial=trial, summary=summarise_by("n_per_subspace"))
