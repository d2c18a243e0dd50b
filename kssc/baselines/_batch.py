"""Bookkeeping of the batched solvers: which problems still iterate, what finished ones gave."""

import numpy as np


class ProblemBatch:
    """n problems of k unknowns solved together; finished ones leave the active set.

    `index` holds the original positions of the active problems, in the order of the
    solver's (compacted) arrays. A solver calls `finish` with a mask over the active
    problems, `drop` to compact, and `result` with its last iterate.
    """

    def __init__(self, n, k, max_iter):
        self.index = np.arange(n)
        self.coef = np.zeros((n, k))
        self.n_iter = np.full(n, max_iter, dtype=np.int64)
        self.converged = np.zeros(n, dtype=bool)

    def finish(self, done, values, iteration):
        """Record the active problems flagged by `done` as converged at `iteration`."""
        rows = self.index[done]
        self.coef[rows] = values[done]
        self.n_iter[rows] = iteration
        self.converged[rows] = True

    def drop(self, keep):
        """Keep only the active problems flagged by `keep`; True when none is left."""
        self.index = self.index[keep]
        return self.index.size == 0

    def result(self, values, live=None):
        """(coef (n, k), n_iter (n,), converged (n,)); unfinished problems get `values`
        (rows flagged by `live` only, when the solver masks instead of compacting)."""
        rows = slice(None) if live is None else live
        if self.index.size:
            self.coef[self.index[rows]] = values[rows]
        return self.coef, self.n_iter, self.converged
