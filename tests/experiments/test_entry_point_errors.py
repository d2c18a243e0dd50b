"""The experiments' entry points end on a missing data folder with its message, no traceback."""

import os
import subprocess
import sys

import pytest

from experiments._checkout import REPO_ROOT


@pytest.mark.e2e  # a Hydra start: about 5 s idle
def test_missing_data_folder_is_one_message(tmp_path):
    env = {**os.environ, "KSSC_DATA_DIR": str(tmp_path / "empty"), "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "experiments.run", "experiment=tir", "profile=smoke",
         f"results_dir={tmp_path / 'results'}"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 1
    error = [line for line in done.stderr.splitlines() if line.strip()]
    assert error[-1].startswith("experiments.run: error: 1 file(s) of data set 'tir' missing")
    assert "Traceback" not in done.stderr and "HYDRA_FULL_ERROR" not in done.stderr
    assert "`make data`" in error[-1] and "KSSC_DATA_DIR=" in error[-1]
