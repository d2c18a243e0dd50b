"""Extended Yale B: file selection (no data needed) and loading of the real images."""

import numpy as np
import pytest
from PIL import Image

from kssc.datasets import (
    YALEB_SUBJECTS,
    DataNotFoundError,
    _integrity,
    list_yaleb_images,
    load_yaleb,
)
from kssc.datasets.yaleb import read_pgm

BAD_PER_SUBJECT = {11: 4, 12: 5, 13: 4, 15: 1, 16: 2, 17: 1, 18: 1}
ZERO_IMAGE = "CroppedYale/yaleB15/yaleB15_P00A-035E+40.pgm.bad"


def test_image_counts():
    assert len(YALEB_SUBJECTS) == 38 and 14 not in YALEB_SUBJECTS
    paths, y = list_yaleb_images(n_per_subject=None)
    assert len(paths) == 2432 and np.bincount(y)[list(YALEB_SUBJECTS)].tolist() == [64] * 38
    good, y_good = list_yaleb_images(include_bad=False, n_per_subject=None)
    assert len(good) == 2414
    bad = {s: 64 - int((y_good == s).sum()) for s in YALEB_SUBJECTS if (y_good == s).sum() < 64}
    assert bad == BAD_PER_SUBJECT
    assert len(list_yaleb_images(n_per_subject=64)[0]) == 2432
    assert len(list_yaleb_images(include_bad=False)[0]) == 2414


def test_file_order_and_selection():
    paths, y = list_yaleb_images([1], n_per_subject=3)
    assert paths == [f"CroppedYale/yaleB01/yaleB01_P00A+000E{e}.pgm" for e in ("+00", "+20", "+45")]
    assert y.tolist() == [1, 1, 1]
    paths, y = list_yaleb_images([15, 2, 15], n_per_subject=64)
    assert len(paths) == 192 and y.tolist() == [15] * 64 + [2] * 64 + [15] * 64
    assert ZERO_IMAGE in paths
    assert not any(p.endswith("Ambient.pgm") or p.endswith(".info") for p in paths)


@pytest.mark.parametrize("subjects", [[14], [0], [40], []])
def test_bad_subjects(subjects):
    with pytest.raises(ValueError, match="1..39 without 14"):
        list_yaleb_images(subjects)


@pytest.mark.parametrize(("size", "n_features"),
                         [((96, 84), 8064), ((48, 42), 2016), (None, 32256)])
def test_load_sizes(yaleb_dir, size, n_features):
    X, y = load_yaleb([1, 15], size=size, data_dir=yaleb_dir)
    assert X.shape == (128, n_features) and X.dtype == np.float64
    assert X.min() >= 0.0 and X.max() <= 1.0 and X.max() > 0.9
    assert y.tolist() == [1] * 64 + [15] * 64
    paths, _ = list_yaleb_images([1, 15])
    zero_row = paths.index(ZERO_IMAGE)
    assert not X[zero_row].any()
    assert (X.sum(axis=1) > 0).sum() == 127


def test_full_size_matches_pillow_decoding(yaleb_dir):
    X, _ = load_yaleb([3], size=None, n_per_subject=2, data_dir=yaleb_dir)
    path = yaleb_dir / "yaleb" / list_yaleb_images([3], n_per_subject=1)[0][0]
    expected = np.asarray(Image.open(path), dtype=np.float64) / 255.0
    assert expected.shape == (192, 168)
    np.testing.assert_array_equal(X[0].reshape(192, 168), expected)
    assert read_pgm(path).dtype == np.uint8


def test_resize_is_close_to_block_average(yaleb_dir):
    X_full, _ = load_yaleb([5], size=None, n_per_subject=4, data_dir=yaleb_dir)
    X_half, _ = load_yaleb([5], size=(96, 84), n_per_subject=4, data_dir=yaleb_dir)
    averaged = X_full.reshape(4, 96, 2, 84, 2).mean(axis=(2, 4)).reshape(4, -1)
    assert np.abs(X_half - averaged).mean() < 0.02


def test_include_bad_false_and_all_images(yaleb_dir):
    X, y = load_yaleb(size=(48, 42), include_bad=False, n_per_subject=None, data_dir=yaleb_dir)
    assert X.shape == (2414, 2016)
    assert (np.linalg.norm(X, axis=1) > 0).all()


def test_repeated_paper_sized_load_hashes_nothing(yaleb_dir, monkeypatch):
    X, y = load_yaleb([4, 22, 37], data_dir=yaleb_dir)
    assert X.shape == (192, 8064)
    monkeypatch.setattr(_integrity, "sha256_file", lambda path: pytest.fail(f"{path} hashed again"))
    X_again, _ = load_yaleb([4, 22, 37], data_dir=yaleb_dir)
    np.testing.assert_array_equal(X, X_again)


def test_missing_images_error(tmp_path):
    with pytest.raises(DataNotFoundError, match=r"64 file\(s\) of data set 'yaleb'.*and 59 more"):
        load_yaleb([7], data_dir=tmp_path)
