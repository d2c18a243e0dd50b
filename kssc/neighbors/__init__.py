"""Stage 1 of the paper's Algorithm 1: each point's k nearest neighbours.

`nearest_neighbors` dispatches (`_search`) to the exact blocked search (`_exact`, with the
compiled running top-k of `_topk`) or the approximate IVF self-join (`_ann` over
`_ivf_join`), after the memory check of `_memory`; `candidates` widens the neighbours into
the sets each point is coded over.
"""

from ._ann import IVF, NeighborRecallWarning
from ._memory import NeighborMemoryError
from ._search import METRICS, nearest_neighbors, nearest_neighbours  # noqa: F401 (deprecated alias)

__all__ = ["IVF", "METRICS", "NeighborMemoryError", "NeighborRecallWarning", "nearest_neighbors"]
