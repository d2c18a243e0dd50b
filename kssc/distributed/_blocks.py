"""Row blocks of a dask array held as futures on the workers, and the moves between them.

Every stage of the distributed fit works on the same row partition of X: block b holds rows
``bounds[b]:bounds[b + 1]``. A block's future lives on one worker; the functions here move
only the rows a task asks for (`take_rows`) or one part of a task's split output (`part`).
"""

import operator

import numpy as np

from ..utils._validation import normalize_rows


class RowBlocks:
    """Futures of consecutive row blocks of an (n, ...) array and the row where each starts.

    Parameters
    ----------
    futures : list of distributed.Future
        One future per block, in row order.
    bounds : ndarray of shape (n_blocks + 1,)
        Block b holds rows ``bounds[b]:bounds[b + 1]``.
    """

    def __init__(self, futures, bounds):
        self.futures = list(futures)
        self.bounds = np.asarray(bounds, dtype=np.int64)

    @property
    def n_rows(self):
        """Total number of rows."""
        return int(self.bounds[-1])

    def spans(self):
        """(start, stop) of every block."""
        return list(zip(self.bounds[:-1].tolist(), self.bounds[1:].tolist(), strict=True))

    def owners(self, ids):
        """Block holding each global row id."""
        return np.searchsorted(self.bounds, ids, side="right") - 1

    def to_dask(self, shape_tail, dtype):
        """The blocks as one dask array (no data moves)."""
        import dask.array as da

        return da.concatenate([
            da.from_delayed(f, (stop - start, *shape_tail), dtype=dtype)
            for f, (start, stop) in zip(self.futures, self.spans(), strict=True)])


def _value(value):
    return value


def shared(client, value):
    """Future of `value`, a small object many tasks read (a trained index, coarse vectors).

    A task that returns `value`, not `client.scatter`: the scheduler keeps a task's inputs and
    recomputes its result when the worker holding it dies, whereas scattered data is forgotten
    once the client drops it, and every block computed from it is then lost with its worker.
    """
    return client.submit(_value, value)


def placements(client, n):
    """`client.submit` keywords for n families of tasks, family i on the i-th worker thread
    in turn: where the scheduler chose by the inputs' bytes, two partitions' joins landed on
    one worker and ran in turn while the other idled (docs/scaling.md). A preference only:
    another worker runs them when that one is gone."""
    slots = [address for address, threads in sorted(client.nthreads().items())
             for _ in range(threads)]
    return [{"workers": [slots[i % len(slots)]], "allow_other_workers": True}
            for i in range(n)]


def concatenate(*blocks):
    """Row blocks (arrays) stacked, in one task."""
    return np.concatenate(blocks)


def rows_between(block, start, stop):
    """Rows start..stop-1 of a block, in one task."""
    return block[start:stop]


def part(client, future, i):
    """Future of item `i` of a task's tuple or list output, computed where it lives."""
    return client.submit(operator.getitem, future, i)


def check_dask_array(X):
    """Check that X is a 2-D, numeric, row-partitioned dask array; return its row bounds."""
    import dask.array as da

    if not isinstance(X, da.Array):
        raise TypeError(
            f"X must be a dask.array.Array partitioned by rows; got {type(X).__name__}. Wrap "
            "data on disk with kssc.distributed.read_npy or dask.array.from_zarr, or fit "
            "in-memory data with kssc.KSSC.")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features); got {X.ndim} dimension(s).")
    if len(X.chunks[1]) != 1:
        raise ValueError(
            f"X is chunked along its columns ({len(X.chunks[1])} column chunks "
            f"{X.chunks[1]}); every block must hold whole rows: X.rechunk({{1: -1}}).")
    if X.dtype.kind not in "fiub":
        raise ValueError(f"X must be numeric; got dtype {X.dtype}.")
    if any(np.isnan(c) for c in X.chunks[0]):
        raise ValueError("X has unknown chunk sizes; call X.compute_chunk_sizes() first.")
    return np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.int64)


def unit_block(block):
    """(unit-norm float64 rows, local rows with NaN or inf, local rows of zero norm)."""
    X = np.asarray(block, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(X).all(axis=1))
    if bad.size:
        return None, bad, np.empty(0, dtype=np.int64)
    U, zero = normalize_rows(X)
    return U, bad, np.flatnonzero(zero)


def take_rows(block, ids, start):
    """Rows `ids` (global, sorted) of the block that starts at row `start`."""
    return block[ids - start]


def split_by_owner(ids, bounds):
    """Sorted distinct `ids` cut into one array per block of `bounds` (many empty)."""
    ids = np.unique(ids)
    cuts = np.searchsorted(ids, bounds)
    return [ids[a:b] for a, b in zip(cuts[:-1], cuts[1:], strict=True)]


def gather_rows(client, blocks, ids):
    """Rows `ids` (any order, repeats allowed) of `blocks`, on the client: only those rows move."""
    ids = np.asarray(ids, dtype=np.int64)
    wanted = split_by_owner(ids, blocks.bounds)
    futures = [client.submit(take_rows, f, w, start)
               for f, w, (start, _) in zip(blocks.futures, wanted, blocks.spans(), strict=True)
               if w.size]
    rows = np.concatenate(client.gather(futures))
    return rows[np.searchsorted(np.concatenate(wanted), ids)]


def _read_rows(path, start, stop):
    return np.array(np.load(path, mmap_mode="r")[start:stop])


def read_npy(path, rows_per_block=None):
    """A row-partitioned dask array over a .npy file, each block read by the worker using it.

    Parameters
    ----------
    path : str or path-like
        A 2-D .npy file (n_samples, n_features), readable from every worker.
    rows_per_block : int or None, default=None
        Rows per block (None: about 64 MiB a block).

    Returns
    -------
    X : dask.array.Array of shape (n_samples, n_features)
        Lazy: no block is read until a task needs it; the client never holds the data.

    See Also
    --------
    fit : Clusters such an array on the cluster.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from kssc.distributed import read_npy
    >>> path = os.path.join(tempfile.mkdtemp(), "X.npy")
    >>> np.save(path, np.arange(12.0).reshape(6, 2))
    >>> read_npy(path, rows_per_block=4).chunks
    ((4, 2), (2,))
    """
    import os

    import dask
    import dask.array as da

    path = os.fspath(path)
    header = np.load(path, mmap_mode="r")
    if header.ndim != 2:
        raise ValueError(f"{path} holds an array of shape {header.shape}; expected 2-D.")
    n, d = header.shape
    if rows_per_block is None:
        rows_per_block = max(1, 64 * 2**20 // max(1, d * header.itemsize))
    starts = range(0, n, rows_per_block)
    return da.concatenate([
        da.from_delayed(dask.delayed(_read_rows, pure=True)(path, s, min(s + rows_per_block, n)),
                        (min(s + rows_per_block, n) - s, d), dtype=header.dtype)
        for s in starts])
