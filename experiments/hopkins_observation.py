"""Figure:hopkins_observation (docs/protocol.md 3.9): singular values of motions; TP/FP vs k.

The 41 sequences, raw trajectories X (P, 2F), not normalised, no noise. Singular values
of every motion of the first sequences (the code kept only each sequence's last motion,
which the figure draws; all are stored, column `motion`). TP/FP per sequence; the figure
shows their mean and the median of the 'sufficient' indicator. Exact kNN (deviation).
"""

import numpy as np
import pandas as pd

from kssc.datasets import load_hopkins_sequence, select_hopkins_sequences

from ._observation import neighbour_rows, singular_value_rows, summarise_dims
from ._trial import Experiment


def compute(exp, data_dir):
    rows = []
    names = select_hopkins_sequences(exp.get("sequences"), exp["subset"], data_dir)
    for position, name in enumerate(names):
        X, y = load_hopkins_sequence(name, data_dir=data_dir)
        if position < exp["n_plot_groups"]:
            motions = np.unique(y)
            for motion in motions:
                rows += singular_value_rows(X[y == motion], name, exp["n_singular"],
                                            motion=int(motion),
                                            last_motion=bool(motion == motions[-1]))
        rows += neighbour_rows(X, y, name, exp["k_max"], exp["subspace_dim"])
    return pd.DataFrame(rows)


EXPERIMENT = Experiment(compute=compute, summary=summarise_dims)
