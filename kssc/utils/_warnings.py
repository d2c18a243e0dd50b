"""Warnings attributed to the caller's line, however deep in the fit they are raised."""

import sys
import warnings
from contextlib import contextmanager

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


def warn_not_converged(converged, solver, max_iter, advice="raise max_iter or tol"):
    """ConvergenceWarning naming how many sub-problems hit max_iter, and what to change."""
    missed = int((~converged).sum())
    if missed:
        warn_caller(
            f"{missed} of {converged.size} point(s) reached max_iter={max_iter} in the {solver} "
            f"solver before meeting the tolerance; {advice}.",
            ConvergenceWarning,
        )


def warn_admm_not_converged(converged, solver, name="ADMM"):
    """`warn_not_converged` for an `ADMM` solver, whose settings live in the ADMM object.

    Their "all" rule runs every point to the cap unless all points meet the tolerance
    together: the cap is part of their method (the recommended settings stop there on every
    fit), not a failure, so only the "each" rule warns.
    """
    if solver.stopping != "all":
        warn_not_converged(converged, name, solver.max_iter,
                           advice=f"raise it with solver=ADMM(max_iter={2 * solver.max_iter}, "
                                  "...) or loosen ADMM(tol=...)")


@contextmanager
def one_line_warnings(prog, file=None):
    """Show the warnings raised inside as ``prog: warning: message``, one line each, once per
    category and message (a command's user has no source line to read, and AutoKSSC's
    candidates raise the same warning once each). Filters still decide what is shown.
    """
    shown = set()

    def show(message, category, filename, lineno, file_=None, line=None):
        text = " ".join(str(message).split())
        if (category, text) not in shown:
            shown.add((category, text))
            print(f"{prog}: warning: {text}", file=file or sys.stderr)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield
