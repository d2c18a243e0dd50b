"""Extended Yale B, all 38 subjects at once: 2,414 faces (every non-.bad image) at 48 x 42.

One data set, fitted `experiment.trials` times with different seeds by every configured
method; accuracy (Hungarian-matched, %) and fit time per method.
"""

import numpy as np

from kssc.datasets import yaleb_subject_images
from kssc.datasets.yaleb import SUBJECTS

from ._trial import Experiment, fit_methods, summarise_by


def tasks(exp, data_dir=None):
    return [({}, t) for t in range(exp["trials"])]


def trial(context, cell, trial, seed):
    exp = context["experiment"]
    subjects = exp.get("subjects") or SUBJECTS
    blocks = [yaleb_subject_images(s, size=tuple(exp["size"]), include_bad=False,
                                   n_per_subject=None, data_dir=context["data_dir"])
              for s in subjects]
    X = np.vstack(blocks)
    y = np.repeat(np.arange(len(blocks)), [len(b) for b in blocks])
    rows = fit_methods(context, X, y, seed)
    for row in rows:
        row.update(accuracy_pct=100.0 - row["error_pct"], n_samples=len(y),
                   ambient_dim=X.shape[1])
    return rows


EXPERIMENT = Experiment(tasks=tasks, trial=trial,
                        summary=summarise_by(scores=("accuracy_pct",)))
