"""Fixtures shared by the test folders (tests/<package>/ mirror the packages): test modules
take what they share from here or from the helper modules beside it (`_graphs`), never
from each other."""

import os

import pytest
from _graphs import block_graph as _block_graph

from kssc.datasets import DATASETS, get_data_dir
from kssc.datasets._paths import missing_files
from kssc.datasets._registry import declarations


def _real_data(name, relpaths=None):
    """The data folder, if it holds `relpaths` (default: every file) of data set `name`.

    Otherwise the test is skipped with the first missing file named, or fails when
    $KSSC_DATA_DIR is set (CI points it at a complete copy, so absence there is an error).
    """
    missing = missing_files(name, relpaths)
    if missing:
        path = get_data_dir() / name / missing[0]
        message = (f"{path} is missing ({len(missing)} file(s) of {name} absent): "
                   "run `make data` or set KSSC_DATA_DIR")
        if os.environ.get("KSSC_DATA_DIR"):
            pytest.fail(message)
        pytest.skip(message)
    return get_data_dir()


def _compose_config(*overrides, results_dir=None):
    """conf/config.yaml composed with Hydra `overrides`; `results_dir` set when given."""
    from hydra import compose, initialize_config_dir  # an extra (experiments), loaded on use

    from experiments._checkout import CONF_DIR

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=list(overrides))
    if results_dir is not None:
        cfg.results_dir = str(results_dir)
    return cfg


@pytest.fixture(scope="session")
def real_data():
    """`real_data(name, relpaths=None)`: the data folder holding those files of data set
    `name`, else the test is skipped (or fails when $KSSC_DATA_DIR is set)."""
    return _real_data


@pytest.fixture(scope="session")
def compose_config():
    """`compose_config(*overrides, results_dir=None)`: the experiments' config
    (conf/config.yaml) composed with Hydra overrides, as `python -m experiments.run` would;
    the one place the tests compose with Hydra."""
    return _compose_config


@pytest.fixture(scope="session")
def block_graph():
    """`block_graph(n_blocks, size, seed=0, per_row=3)`: a graph of random blocks and its
    block labels."""
    return _block_graph


def _data_set_fixture(name):
    def data_dir():
        return _real_data(name)

    data_dir.__doc__ = (f"The real data folder, holding every file of {declarations()[name].title}"
                        " (else the test is skipped, naming a missing file).")
    return pytest.fixture(scope="module", name=f"{name}_dir")(data_dir)


# One fixture per registered data set: `tir_dir`, `hopkins155_dir`, `yaleb_dir`, ...
for _name in DATASETS:
    globals()[f"{_name}_dir"] = _data_set_fixture(_name)
