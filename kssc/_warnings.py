"""Warnings attributed to the caller's line, however deep in the fit they are raised."""

import sys
import warnings

from sklearn.exceptions import ConvergenceWarning

# Frames of these packages are skipped: a warning names the first line outside them, the
# user's call of `fit` (scikit-learn's frames sit between: `_fit_context`, `fit_predict`).
_INTERNAL = ("kssc", "sklearn")


def _is_internal(frame):
    module = frame.f_globals.get("__name__", "")
    return module.partition(".")[0] in _INTERNAL


def warn_caller(message, category=UserWarning):
    """`warnings.warn` with the stacklevel of the first frame outside kssc."""
    frame = sys._getframe()
    level = 1
    while frame.f_back is not None and _is_internal(frame):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


def warn_not_converged(converged, solver, max_iter):
    """ConvergenceWarning naming how many sub-problems hit max_iter."""
    missed = int((~converged).sum())
    if missed:
        warn_caller(
            f"{missed} of {converged.size} point(s) reached max_iter={max_iter} in the {solver} "
            "solver before meeting the tolerance; raise max_iter or tol.",
            ConvergenceWarning,
        )
