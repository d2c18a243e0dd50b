"""Config checks of a run, before its first trial: the experiment's name, trial count,
n_jobs, and every method's `_target_` and parameters (names and values the estimator's own
parameter validation refuses). The runner calls `check_config` once per run; `suite.py`
calls it before deciding whether to run.
"""

import inspect
from pathlib import Path

from hydra.utils import get_object, instantiate
from omegaconf import DictConfig, OmegaConf
from sklearn.utils._param_validation import InvalidParameterError

from ._checkout import CONF_DIR


def experiment_names():
    """Every experiment: the configs in conf/experiment/."""
    return sorted(path.stem for path in (CONF_DIR / "experiment").glob("*.yaml"))


def check_config(cfg):
    """Check a composed config; raise ValueError naming the offending value.

    Catches an unknown experiment, a seed that is not a non-negative integer (1.5 would be
    truncated), a bad trial count or n_jobs, a method whose `_target_`
    cannot be imported, that is given parameters its estimator lacks, or whose values the
    estimator's own parameter validation refuses.
    """
    name = OmegaConf.select(cfg, "experiment.name")
    names = experiment_names()
    if name is None:
        raise ValueError(f"No experiment chosen: pass experiment=NAME with NAME one of {names}.")
    if name not in names:
        raise ValueError(f"Unknown experiment {name!r}; choose one of {names}.")
    seed = OmegaConf.select(cfg, "seed")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer; got {seed!r}.")
    trials = OmegaConf.select(cfg, "experiment.trials")
    if trials is not None and (not isinstance(trials, int) or trials < 1):
        raise ValueError(f"experiment.trials must be a positive integer; got {trials!r}.")
    n_jobs = OmegaConf.select(cfg, "n_jobs")
    if not isinstance(n_jobs, int) or n_jobs == 0 or n_jobs < -1:
        raise ValueError(f"n_jobs must be a positive integer or -1 (all cores); got {n_jobs!r}.")
    for method, node in (OmegaConf.select(cfg, "methods") or {}).items():
        _check_method(method, node)
    return cfg


def _check_method(name, node):
    target = node.get("_target_") if isinstance(node, (dict, DictConfig)) else None
    if not target:
        raise ValueError(f"Unknown method {name!r}: its config has no _target_ ({node!r}).")
    try:
        cls = get_object(target)
    except Exception as exc:
        raise ValueError(
            f"Unknown method {name!r}: cannot import _target_={target!r} ({exc}).") from exc
    accepted = inspect.signature(cls).parameters
    unknown = [key for key in node if not key.startswith("_") and key not in accepted]
    if unknown:
        raise ValueError(f"Method {name!r} ({target}) has no parameter(s) {unknown}.")
    estimator = instantiate(node, _convert_="all")
    if hasattr(estimator, "_validate_params"):
        try:
            estimator._validate_params()
        except InvalidParameterError as exc:
            raise ValueError(f"Method {name!r} ({target}): {exc}") from exc


def config_as_dict(cfg):
    """A composed config as plain Python (resolved); a dict is returned as it is."""
    return cfg if isinstance(cfg, dict) else OmegaConf.to_container(cfg, resolve=True)


def data_dir(path=None):
    """The data folder: the argument, else $KSSC_DATA_DIR, else data/ at the repository root."""
    from kssc.datasets import get_data_dir

    return get_data_dir(path)


def results_dir_of(conf):
    """The results folder a config names; a run always names one (run.py gives Hydra's run
    folder when the command line does not), so that nothing writes into results/ by default."""
    folder = conf.get("results_dir")
    if not folder:
        raise ValueError("results_dir is not set: pass results_dir=FOLDER "
                         "(python experiments/run.py sets it to Hydra's run folder).")
    return Path(folder)
