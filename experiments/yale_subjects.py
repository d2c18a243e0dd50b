"""Extended Yale B with 2, 3, 5, 8 and 10 subjects: clean images, tuned methods.

Every trial draws `n_subjects` distinct subjects at random (no repeats), takes all their
non-.bad images at 48 x 42 pixels (2,016-d, pixel / 255), and fits every method with the
settings fixed once for the data set. The summary table gives error statistics per number
of subjects and method, and the mean fit time; the published SSC means are in the config
(`feeds`), beside the claims they feed.
"""

import numpy as np

from kssc.datasets import yaleb_subject_images

from ._trial import Experiment, data_seed, fit_methods, summarise_by


def tasks(exp, data_dir=None):
    return [({"n_subjects": int(n)}, t) for n in exp["n_subjects"] for t in range(exp["trials"])]


def draw_subjects(exp, n_subjects, seed):
    rng = np.random.default_rng(data_seed(seed))
    picks = rng.choice(len(exp["subjects"]), size=n_subjects, replace=False)
    return sorted(int(exp["subjects"][i]) for i in picks)


def trial(context, cell, trial, seed):
    exp = context["experiment"]
    subjects = draw_subjects(exp, cell["n_subjects"], seed)
    size = tuple(exp["size"]) if exp.get("size") else None
    blocks = [yaleb_subject_images(s, size=size, include_bad=False,
                                   n_per_subject=exp.get("n_per_subject"),
                                   data_dir=context["data_dir"])
              for s in subjects]
    X = np.vstack(blocks)
    y = np.repeat(np.arange(len(blocks)), [len(b) for b in blocks])
    rows = fit_methods(context, X, y, seed)
    for row in rows:
        row.update(subjects="-".join(map(str, subjects)), n_samples=len(y), ambient_dim=X.shape[1])
    return rows


EXPERIMENT = Experiment(tasks=tasks, trial=trial, summary=summarise_by("n_subjects"))
