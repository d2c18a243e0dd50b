"""Fixtures of the experiments' tests: the toy experiment (`toy_experiment.py`) and its
configs."""

import pytest
import toy_experiment


@pytest.fixture(scope="session")
def toy():
    """The toy experiment's module: `TOY` (six trials: three cells, two trials each),
    `toy_tasks`, `KMeansStandIn`, `STAND_IN` (its Hydra target), `SlowStandIn`."""
    return toy_experiment


@pytest.fixture(scope="session")
def toy_config(compose_config):
    """`toy_config(tmp_path, *overrides)`: synthetic_intersection's config at profile=smoke
    with the stand-in estimator only, writing into tmp_path/results."""

    def config(tmp_path, *overrides):
        return compose_config(*toy_experiment.TOY_OVERRIDES, *overrides,
                              results_dir=tmp_path / "results")

    return config


@pytest.fixture(scope="session")
def run_toy():
    """`run_toy(cfg, on_trial=None, declared=TOY)`: run a config with the toy experiment (or
    `declared`) in place of its own; its rows."""
    return toy_experiment.run_toy
