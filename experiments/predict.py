"""New points: `KSSC.predict` on held-out points against refitting with them.

Every trial holds out a stratified share of the points (`experiment.holdout`), fits k-SSC on
the rest and labels the held-out points with `predict` ("predict" rows), and fits k-SSC on
all points ("refit" rows), with the same preset and seed. Both rows score all points
(`error_pct`, Hungarian-matched over all of them) and the held-out points alone under that
same matching (`heldout_error_pct`). Data: scikit-learn's digits (the generic preset) and
Extended Yale B with 3 and 10 random subjects (48 x 42 pixels, .bad images excluded; the
faces preset).
"""

import warnings
from time import perf_counter

import numpy as np
from hydra.utils import get_class
from scipy.optimize import linear_sum_assignment
from sklearn.datasets import load_digits
from sklearn.metrics.cluster import contingency_matrix
from sklearn.model_selection import train_test_split

from kssc.datasets import yaleb_subject_images
from kssc.presets import PRESETS, preset_params

from ._trial import Experiment, data_seed, method_seed, summarise_by


def tasks(exp, data_dir=None):
    return [({"dataset": name}, t) for name in exp["run"]
            for t in range(exp["datasets"][name].get("trials", exp["trials"]))]


def check(exp):
    if not 0 < exp["holdout"] < 1:
        raise ValueError(f"experiment.holdout must be in (0, 1); got {exp['holdout']!r}.")
    unknown = set(exp["run"]) - set(exp["datasets"])
    if unknown:
        raise ValueError(f"experiment.run names unknown datasets {sorted(unknown)}; choose "
                         f"from {sorted(exp['datasets'])}.")
    for name, spec in exp["datasets"].items():
        if spec["preset"] not in PRESETS:
            raise ValueError(f"experiment.datasets.{name}.preset must be one of {PRESETS}; "
                             f"got {spec['preset']!r}.")


def load(spec, exp, data_dir, seed):
    """(X, y) of one dataset cell; Yale B draws its subjects from `seed`."""
    if spec["source"] == "digits":
        X, y = load_digits(return_X_y=True)
        if spec.get("n_samples"):
            X, _, y, _ = train_test_split(X, y, train_size=spec["n_samples"], stratify=y,
                                          random_state=data_seed(seed) % 2**32)
        return X.astype(np.float64), y
    rng = np.random.default_rng(data_seed(seed))
    subjects = sorted(rng.choice(exp["subjects"], size=spec["n_subjects"], replace=False))
    blocks = [yaleb_subject_images(int(s), size=tuple(exp["size"]), include_bad=False,
                                   n_per_subject=None, data_dir=data_dir) for s in subjects]
    return np.vstack(blocks), np.repeat(np.arange(len(blocks)), [len(b) for b in blocks])


def matched_errors(y, labels, held):
    """(error over all points, error over the `held` points), in %, under one Hungarian
    matching of `labels` to `y` over all points."""
    classes, y_codes = np.unique(y, return_inverse=True)
    clusters, l_codes = np.unique(labels, return_inverse=True)
    table = contingency_matrix(y_codes, l_codes)
    rows, cols = linear_sum_assignment(table, maximize=True)
    right = np.zeros(len(y), dtype=bool)
    for r, c in zip(rows, cols, strict=True):
        right |= (y_codes == r) & (l_codes == c)
    return 100.0 * (1 - right.mean()), 100.0 * (1 - right[held].mean())


def trial(context, cell, trial, seed):
    exp = context["experiment"]
    spec = exp["datasets"][cell["dataset"]]
    X, y = load(spec, exp, context["data_dir"], seed)
    n_clusters = len(np.unique(y))
    held = np.zeros(len(y), dtype=bool)
    _, test = train_test_split(np.arange(len(y)), test_size=exp["holdout"], stratify=y,
                               random_state=(data_seed(seed) + 1) % 2**32)
    held[test] = True
    rows = []
    for name, method in context["methods"].items():
        # The preset's values are objects (an ADMM solver): the class is called directly.
        params = {key: value for key, value in method.items() if key != "_target_"}
        make = get_class(method["_target_"])

        def model(make=make, params=params):
            return make(n_clusters, **params, **preset_params(spec["preset"]),
                        random_state=method_seed(seed))

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # as fit_method: the rows carry the outcome
            start = perf_counter()
            fitted = model().fit(X[~held])
            fit_time = perf_counter() - start
            labels = np.empty(len(y), dtype=np.int64)
            labels[~held] = fitted.labels_
            labels[held] = fitted.predict(X[held])
            predict_time = perf_counter() - start - fit_time
            start = perf_counter()
            refit = model().fit(X).labels_
            refit_time = perf_counter() - start
        for protocol, found, fit_s, extra_s in (("predict", labels, fit_time, predict_time),
                                                ("refit", refit, refit_time, 0.0)):
            error, heldout_error = matched_errors(y, found, held)
            rows.append({"method": name, "protocol": protocol, "error_pct": error,
                         "heldout_error_pct": heldout_error, "failed": False, "failure": "",
                         "time_fit_s": fit_s, "time_predict_s": extra_s,
                         "time_representation_s": np.nan, "preset": spec["preset"],
                         "n_samples": len(y), "n_heldout": int(held.sum()),
                         "ambient_dim": X.shape[1]})
    return rows


EXPERIMENT = Experiment(tasks=tasks, trial=trial, check=check,
                        summary=summarise_by("dataset", "protocol",
                                             scores=("heldout_error_pct",)))
