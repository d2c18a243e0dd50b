"""Every script of the examples/ gallery runs, at a small size, as `python examples/NAME.py`.

The scripts run in this process (runpy, as __main__, with their own sys.argv), which
saves an interpreter start and the imports per example.
"""

import runpy
import sys
import warnings

import pytest

from experiments._checkout import REPO_ROOT
from kssc.datasets import get_data_dir, list_yaleb_images

EXAMPLES = sorted(path.name for path in (REPO_ROOT / "examples").glob("*.py"))


def _missing(files):
    return [path for path in files if not path.is_file()]


def _yaleb_files():
    paths, _ = list_yaleb_images([1, 2], include_bad=False)
    return [get_data_dir() / "yaleb" / path for path in paths]


# Small-size arguments of each example, and the data files it needs (None: no data).
SMALL = {
    "digits.py": (["--n-samples", "200"], None),
    "faces.py": (["--subjects", "1", "2", "--size", "24", "21"], _yaleb_files),
    "motion.py": (["--sequence", "cars1"],
                  lambda: [get_data_dir() / "hopkins155" / "cars1" / "cars1_truth.mat"]),
    "million_points.py": (["--n-samples", "3000"], None),
}


def test_every_example_has_a_small_run():
    assert EXAMPLES, "no examples found"
    assert set(EXAMPLES) == set(SMALL), "give every example its small-size arguments in SMALL"


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_runs(name, monkeypatch, capsys):
    args, needed = SMALL[name]
    if needed is not None:
        missing = _missing(needed())
        if missing:
            pytest.skip(f"{name} needs {len(missing)} data file(s) missing from {get_data_dir()} "
                        f"(first: {missing[0]}); run `make data` or set KSSC_DATA_DIR")
    output = _run(name, args, monkeypatch, capsys)
    assert "error" in output, f"{name} printed no clustering error:\n{output}"


def _run(name, args, monkeypatch, capsys):
    path = REPO_ROOT / "examples" / name
    monkeypatch.setattr(sys, "argv", [str(path), *args])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runpy.run_path(str(path), run_name="__main__")
    return capsys.readouterr().out


def test_million_points_takes_its_size_from_the_environment(monkeypatch, capsys):
    monkeypatch.setenv("KSSC_EXAMPLE_N_SAMPLES", "2000")
    output = _run("million_points.py", [], monkeypatch, capsys)
    assert output.startswith("2,000 points"), output
