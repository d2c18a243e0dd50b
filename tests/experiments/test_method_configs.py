"""conf/method/*.yaml: every config builds its estimator, and states every setting that
decides its results, so a change of an estimator's defaults cannot move the experiments."""

import inspect

import pytest
from hydra.utils import get_class, instantiate
from omegaconf import OmegaConf

from experiments._checkout import CONF_DIR

METHODS = sorted((CONF_DIR / "method").glob("*.yaml"))
# Set per trial by the runner, or not affecting the result.
NOT_SETTINGS = {"n_clusters", "random_state", "n_jobs", "chunk_size", "verbose", "max_clusters"}


@pytest.mark.parametrize("path", METHODS, ids=lambda p: p.stem)
def test_method_config_states_every_setting(path):
    cfg = OmegaConf.to_container(OmegaConf.load(path))
    parameters = set(inspect.signature(get_class(cfg["_target_"])).parameters)
    assert parameters - NOT_SETTINGS <= set(cfg), sorted(parameters - NOT_SETTINGS - set(cfg))
    estimator = instantiate(cfg, _convert_="all")
    assert estimator.get_params()["random_state"] is None
