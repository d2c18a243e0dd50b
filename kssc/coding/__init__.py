"""Stage 2 of the paper's Algorithm 1: each point coded over its neighbours.

`kssc_coefficients` (`representation`) solves every point's small Lasso at once with the
compiled per-point kernels (`_point_kernels` over the building blocks of `_kernels`): FISTA
(`fista`), exact LADMPSAP (`ladmpsap`) or ADMM (`admm` holds its settings).
"""

from .admm import ADMM
from .fista import solve_lasso_fista
from .ladmpsap import solve_exact_ladmpsap
from .representation import kssc_coefficients

__all__ = ["ADMM", "kssc_coefficients", "solve_exact_ladmpsap", "solve_lasso_fista"]
