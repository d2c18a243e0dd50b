"""k-SSC on a dask cluster, for data larger than one machine.

Needs dask: ``pip install 'dask[distributed]'`` (in a checkout: ``pip install '.[distributed]'``).

`fit` runs every stage on row blocks of a dask array: neighbours (exact by block pairs, or the
single machine's IVF self-join on every worker's copy of the rows where they fit, else split
by inverted list), coefficients (each block gathers only its
neighbours' rows), the affinity (a shuffle transposes Z) and N-Cut (LOBPCG with its iterate
in row blocks on the workers, discretisation on row blocks): the spectral step sends the
client no array with a row per point. docs/scaling.md has the measurements.
"""

from ._blocks import read_npy
from ._fit import fit

__all__ = ["fit", "read_npy"]
