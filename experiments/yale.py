"""Table:face_results (docs/protocol.md 3.7): three random subjects of Extended Yale B.

Two variants in one run (column `variant`):
- faithful: subjects drawn with replacement (a repeated subject is a separate class of
  identical images, as `randi` gave), the 64 files per subject include the .pgm.bad ones
  (yaleB15's all-zero image included; the estimators guard zero-norm points);
- clean: three distinct subjects, .bad images excluded.
Images 96 x 84 (8064-d), pixel / 255.
"""

import numpy as np

from kssc.datasets import yaleb_subject_images

from ._trial import Experiment, data_seed, fit_methods, summarise_by

VARIANTS = {"faithful": {"replace": True, "include_bad": True},
            "clean": {"replace": False, "include_bad": False}}


def check(exp):
    for variant in exp["variants"]:
        if variant not in VARIANTS:
            raise ValueError(f"Unknown yale variant {variant!r}; choose from {list(VARIANTS)}.")


def draw_subjects(exp, variant, seed):
    rng = np.random.default_rng(data_seed(seed))
    picks = rng.choice(len(exp["subjects"]), size=exp["n_draw"],
                       replace=VARIANTS[variant]["replace"])
    return [int(exp["subjects"][i]) for i in picks]


def tasks(exp, data_dir=None):
    return [({"variant": v}, t) for t in range(exp["trials"]) for v in exp["variants"]]


def trial(context, cell, trial, seed):
    exp = context["experiment"]
    variant = VARIANTS[cell["variant"]]
    subjects = draw_subjects(exp, cell["variant"], seed)
    size = tuple(exp["size"]) if exp.get("size") else None
    blocks = [yaleb_subject_images(s, size=size, include_bad=variant["include_bad"],
                                   n_per_subject=exp["n_per_subject"], data_dir=context["data_dir"])
              for s in subjects]
    X = np.vstack(blocks)
    # Labels by draw position: a subject drawn twice gives two classes of identical images.
    y = np.repeat(np.arange(len(blocks)), [len(b) for b in blocks])
    rows = fit_methods(context, X, y, seed)
    for row in rows:
        row.update(subjects="-".join(map(str, subjects)),
                   duplicate=len(set(subjects)) < len(subjects),
                   n_samples=len(y), ambient_dim=X.shape[1])
    return rows


EXPERIMENT = Experiment(tasks=tasks, trial=trial, summary=summarise_by("variant"), check=check)
