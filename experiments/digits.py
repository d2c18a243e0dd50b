"""Handwritten digits (scikit-learn's bundled `load_digits`, no download): k-SSC with its
defaults beside SSC, TSC, spectral clustering on a k-nearest-neighbour graph and k-means.

1,797 images of 8 x 8 pixels (64-d, grey levels 0..16) in 10 classes. The data are fixed;
each trial fits every method with another seed (and, when `experiment.n_samples` is set,
on another stratified subsample). Scores: accuracy (Hungarian-matched, %), NMI and ARI.
"""

import numpy as np
from sklearn.datasets import load_digits
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score
from sklearn.model_selection import train_test_split

from ._trial import Experiment, data_seed, fit_methods, summarise_by

SCORES = {"nmi": normalized_mutual_info_score, "ari": adjusted_rand_score}


def tasks(exp, data_dir=None):
    return [({}, t) for t in range(exp["trials"])]


def trial(context, cell, trial, seed):
    X, y = load_digits(return_X_y=True)
    n_samples = context["experiment"].get("n_samples")
    if n_samples is not None:
        X, _, y, _ = train_test_split(X, y, train_size=n_samples, stratify=y,
                                      random_state=data_seed(seed) % 2**32)
    rows = fit_methods(context, X.astype(np.float64), y, seed, scorers=SCORES)
    for row in rows:
        row.update(accuracy_pct=100.0 - row["error_pct"], n_samples=len(y),
                   ambient_dim=X.shape[1])
    return rows


EXPERIMENT = Experiment(tasks=tasks, trial=trial,
                        summary=summarise_by(scores=("accuracy_pct", "nmi", "ari")))
