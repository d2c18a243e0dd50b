"""Figure:synthetic_intersection (docs/protocol.md 3.3): error vs dimension t of the intersection.

Two subspaces of R^200 of dimension 10 sharing t basis vectors, t = 0..10 (the code's plot
cut off t = 10 and labelled index i as t = i - 1; here every t is run and labelled).
"""

from kssc.datasets import make_intersection_data

from ._trial import Experiment, data_seed, fit_methods, summarise_by


def tasks(exp, data_dir=None):
    return [({"intersection_dim": t}, trial) for trial in range(exp["trials"])
            for t in exp["intersection_dim"]]


def trial(context, cell, trial, seed):
    exp = context["experiment"]
    X, y = make_intersection_data(cell["intersection_dim"], ambient_dim=exp["ambient_dim"],
                                  subspace_dim=exp["subspace_dim"],
                                  n_per_subspace=exp["n_per_subspace"],
                                  random_state=data_seed(seed))[:2]
    rows = fit_methods(context, X, y, seed)
    for row in rows:
        row["n_samples"] = len(y)
    return rows


EXPERIMENT = Experiment(tasks=tasks, trial=trial, summary=summarise_by("intersection_dim"))
