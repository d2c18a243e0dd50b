"""kssc.neighbors._topk: the running top-k against a brute-force sort, whatever the blocks'
order."""

import numpy as np
import pytest

from kssc.neighbors import _topk


def _best(S, k, skip):
    """Each row's k best (score, key order) indices by a full sort: the reference."""
    rows, n = S.shape
    best = []
    for r in range(rows):
        keys = [_topk._key(r, c) for c in range(n)]
        order = sorted((c for c in range(n) if c != skip[r]), key=lambda c: (-S[r, c], keys[c]))
        best.append(set(order[:k]))
    return best


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [1, 5, 20])
@pytest.mark.parametrize("update", [_topk.update_rows, _topk.join_rows])
def test_update_rows_keeps_the_k_best_whatever_the_block_order(update, seed, k):
    # join_rows raises an empty or weak row's threshold to what k + 1 of its group maxima
    # reach (50 columns: 7 to 50 groups, and a column past the last whole group at k = 1).
    rng = np.random.RandomState(seed)
    S = rng.randint(0, 6, (30, 400)).astype(np.float32)  # few values: many ties
    skip = rng.randint(0, 400, 30)
    reference = _best(S, k, skip)
    for order in (np.arange(8), rng.permutation(8)):
        scores, indices = _topk.empty_top_k(30, k)
        for b in order:
            cols = np.arange(50 * b, 50 * b + 50)
            update(np.ascontiguousarray(S[:, cols]), cols, scores, indices, np.arange(30),
                   skip=skip)
        assert [set(row) for row in indices] == reference
        np.testing.assert_array_equal(np.sort(scores, axis=1),
                                      np.sort(np.take_along_axis(S, indices, 1), axis=1))


@pytest.mark.parametrize("k", [4, 20])
def test_join_rows_raised_threshold_keeps_the_k_best_of_wide_blocks(k):
    # Distinct scores, rows empty then filled by wide blocks (24 to 66 groups of 3 to 8),
    # each row's skipped entry its largest: a threshold raised past the (k + 1)-th group
    # maximum (the k-th, with the skipped one among them) would drop true neighbours.
    rng = np.random.RandomState(3)
    S = rng.standard_normal((40, 600)).astype(np.float32)
    skip = S.argmax(axis=1)
    scores, indices = _topk.empty_top_k(40, k)
    for cols in (np.arange(0, 200), np.arange(200, 600)):
        _topk.join_rows(np.ascontiguousarray(S[:, cols]), cols, scores, indices,
                        np.arange(40), skip=skip)
    assert [set(row) for row in indices] == _best(S, k, skip)


@pytest.mark.parametrize("k", [3, 20])
def test_update_columns_and_rows_agree_with_the_reference(k):
    """Half of each row's candidates arrive by rows, the other half by columns."""
    rng = np.random.RandomState(3)
    S = rng.randint(0, 4, (25, 300)).astype(np.float32)
    no_skip = np.full(25, -1)
    scores, indices = _topk.empty_top_k(25, k)
    _topk.update_rows(np.ascontiguousarray(S[:, :150]), np.arange(150), scores, indices, 0)
    _topk.update_columns(np.ascontiguousarray(S[:, 150:].T), np.arange(150, 300), scores,
                         indices, 0)
    assert [set(row) for row in indices] == _best(S, k, no_skip)


def test_fewer_candidates_than_k_leave_empty_slots():
    scores, indices = _topk.empty_top_k(2, 5)
    _topk.update_rows(np.ones((2, 3), dtype=np.float32), np.arange(3), scores, indices, 0)
    assert [sorted(row) for row in indices] == [[-1, -1, 0, 1, 2]] * 2
