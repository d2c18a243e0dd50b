"""kssc.presets: every preset is the setting its experiment validated (composed from the
same configs), usable in one line, and a scikit-learn estimator."""

import dataclasses
import warnings

import numpy as np
import pytest
from hydra.utils import instantiate
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from kssc import KSSC, clustering_error
from kssc.datasets import make_subspaces
from kssc.presets import PAPER_SETTING, PRESETS, preset_params

# preset -> (experiment, method) whose composed config it must equal.
VALIDATED = {"generic": ("yale_grouped", "kssc_generic"), "paper": ("hopkins", "kssc"),
             "faces": ("yale_grouped", "kssc_face"), "motion": ("hopkins155_cv", "kssc_views")}
NOT_SETTINGS = {"n_clusters", "random_state", "n_jobs", "chunk_size", "verbose", "max_clusters"}


def _settings(params):
    return {key: dataclasses.asdict(value) if dataclasses.is_dataclass(value) else value
            for key, value in params.items() if key not in NOT_SETTINGS}


def test_every_preset_is_tied_to_a_validated_config():
    assert set(VALIDATED) == set(PRESETS)


@pytest.mark.parametrize("name", PRESETS)
def test_preset_equals_the_validated_config(name, compose_config):
    experiment, method = VALIDATED[name]
    cfg = compose_config(f"experiment={experiment}", "profile=default")
    validated = instantiate(cfg.methods[method], _convert_="all")
    preset = preset_params(name)
    # Every setting is stated, so a change of KSSC's defaults cannot move a preset.
    assert set(preset) == set(KSSC().get_params()) - NOT_SETTINGS
    assert _settings(preset) == _settings(validated.get_params())


def test_paper_preset_is_paper_setting_and_presets_are_fresh():
    assert preset_params("paper").items() >= PAPER_SETTING.items()
    first, second = preset_params("faces"), preset_params("faces")
    first["lam"] = 1.0
    assert second["lam"] == 0.05
    with pytest.raises(ValueError, match=r"Unknown preset 'face'; choose one of \['generic'"):
        preset_params("face")


@pytest.mark.parametrize("name", PRESETS)
def test_preset_in_one_line_clones_and_clusters(name):
    X, y, _ = make_subspaces(3, 4, 60, 30, random_state=0)
    model = KSSC(3, random_state=0, **preset_params(name))
    assert clone(model).get_params() == model.get_params()
    with warnings.catch_warnings():
        # The recommended settings fit without a ConvergenceWarning (ADMM's cap is theirs).
        warnings.simplefilter("error", ConvergenceWarning)
        model.fit(X)
    assert clustering_error(y, model.labels_) <= 5.0


def _small(name):
    """The preset on the checks' small data: fewer candidates, as test_kssc_estimator."""
    params = preset_params(name)
    views = np.ndim(params["n_neighbors"])
    # check_clustering's 2-d blobs: removing 5 principal directions would leave none, and
    # the face setting (raw points) needs 8 neighbours there to reach its ARI > 0.4.
    params.update(n_neighbors=[2, 2] if views else 8, n_random=min(params["n_random"], 2),
                  neighbor_pcs=[0, 1] if views else 0)
    return KSSC(**params)


@parametrize_with_checks([_small(name) for name in PRESETS])
def test_presets_are_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)
