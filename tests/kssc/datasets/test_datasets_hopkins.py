"""Hopkins 155: sequence lists (no data needed) and loading of the real files."""


import numpy as np
import pytest
import scipy.io

from kssc.datasets import (
    PAPER41,
    DataNotFoundError,
    list_hopkins_sequences,
    load_hopkins,
    load_hopkins_sequence,
)
from kssc.datasets._paths import read_checksums
from kssc.datasets.hopkins import hopkins_metadata


def test_sequence_lists():
    everything = list_hopkins_sequences("all")
    standard = list_hopkins_sequences("hopkins155")
    paper = list_hopkins_sequences("paper41")
    assert len(everything) == 156 and everything == sorted(everything)
    assert len(standard) == 155 and "dancing" not in standard
    assert len(list_hopkins_sequences("hopkins155", n_motions=2)) == 120
    assert len(list_hopkins_sequences("hopkins155", n_motions=3)) == 35
    assert list_hopkins_sequences("all", n_motions=5) == ["dancing"]
    assert paper == sorted(PAPER41) and len(paper) == 41
    assert len(list_hopkins_sequences("paper41", n_motions=3)) == 33
    assert list_hopkins_sequences("paper41", n_motions=2) == [
        "cars1", "cars2", "cars4", "cars6", "cars7", "cars8", "truck1", "truck2"]
    assert paper[:3] == ["1R2RC", "1R2RCR", "1R2RCT_A"]  # ASCII order, as MATLAB dir


def test_metadata_matches_checksum_list():
    listed = {rel.split("/")[0] for rel in read_checksums("hopkins155")
              if rel.endswith("_truth.mat")}
    assert listed == set(hopkins_metadata())
    with pytest.raises(ValueError, match="subset"):
        list_hopkins_sequences("hopkins156")


def test_every_sequence_loads_with_consistent_shapes(hopkins155_dir):
    table = hopkins_metadata()
    for name in list_hopkins_sequences("all"):
        X, y = load_hopkins_sequence(name, hopkins155_dir)
        raw = scipy.io.loadmat(hopkins155_dir / "hopkins155" / name / f"{name}_truth.mat",
                               variable_names=["points", "frames"])
        n_points, n_frames = int(raw["points"][0, 0]), int(raw["frames"][0, 0])
        assert X.shape == (n_points, 2 * n_frames), name
        assert (n_points, n_frames) == (table[name]["n_points"], table[name]["n_frames"])
        assert X.dtype == np.float64 and y.dtype == np.int64
        assert np.unique(y).tolist() == list(range(1, table[name]["n_motions"] + 1)), name
        assert np.abs(X).max() < 1.01


def test_trajectory_layout(hopkins155_dir):
    X, y = load_hopkins_sequence("cars1", hopkins155_dir)
    raw = scipy.io.loadmat(hopkins155_dir / "hopkins155" / "cars1" / "cars1_truth.mat")
    x = raw["x"]
    for f in (0, 1, x.shape[2] - 1):
        np.testing.assert_array_equal(X[:, 2 * f:2 * f + 2], x[0:2, :, f].T)
    np.testing.assert_array_equal(y, raw["s"].ravel())


def test_load_hopkins_paper41(hopkins155_dir):
    loaded = list(load_hopkins("paper41", data_dir=hopkins155_dir))
    assert [name for name, _, _ in loaded] == list_hopkins_sequences("paper41")
    sizes = [X.shape[0] for _, X, _ in loaded]
    frames = [X.shape[1] // 2 for _, X, _ in loaded]
    assert (min(sizes), max(sizes)) == (123, 556)
    assert (min(frames), max(frames)) == (15, 61)
    assert sum(len(np.unique(y)) == 3 for _, _, y in loaded) == 33


def test_missing_sequence_names_files(tmp_path):
    with pytest.raises(DataNotFoundError, match=r"1R2RC/1R2RC_truth.mat.*and 36 more"):
        load_hopkins("paper41", data_dir=tmp_path)
    with pytest.raises(ValueError, match="unknown"):
        load_hopkins_sequence("no-such-sequence", tmp_path)
