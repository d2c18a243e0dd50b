"""Run one experiment: `python -m experiments.run experiment=NAME [profile=smoke|default|paper]`.

Thin Hydra entry point: composes `conf/`, then runs the experiment (`_runner.run`), which
writes `<NAME>.csv`, its summary `<NAME>_table.csv` and its sidecar `<NAME>.meta.json` into
the results folder: `results_dir=` when given, else Hydra's run folder
(outputs/hydra/<time>/, one subfolder per job of a multirun), never the committed
results/: only the suite (`make figures`) writes there, and a run given results/ (by
`results_dir=` or `hydra.run.dir=`) is refused. Two overrides that give one column
(`seed=2 +config_seed=7`) are refused too. Every value set on the command line (other
than where and how fast to run) becomes a column of the CSV, so the jobs of a sweep
(`-m methods.kssc.lam=0.05,0.1`) can be concatenated and told apart.
"""

import sys
from pathlib import Path

if __package__ in (None, ""):
    # `python experiments/run.py ...`: the checkout's root, not experiments/, heads the import
    # path, as under `python -m experiments.run` from the root.
    sys.path[0] = str(Path(__file__).resolve().parent.parent)

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import OmegaConf, open_dict

from experiments import _config, _runner
from kssc.datasets import DataNotFoundError

CONFIG_DIR = str(_config.CONF_DIR)
# Overrides that choose what runs, where or how fast: not columns.
NOT_COLUMNS = ("experiment", "profile", "results_dir", "data_dir", "n_jobs", "restart")


def run(cfg):
    """Run the experiment a composed config names; returns the results DataFrame."""
    return _runner.run(cfg)


def override_columns(cfg, overrides):
    """{column: value} of the command line's overrides: `methods.kssc.lam=0.05` gives column
    `methods_kssc_lam` holding the composed value. An override named like a column every
    trial row carries keeps its value under `config_<name>` (`seed=5` gives `config_seed`;
    each row's own `seed`, the bootstrap's unit, stays the trial's seed)."""
    columns, sources = {}, {}
    for override in overrides:
        key = override.split("=", 1)[0].lstrip("+~")
        if key in NOT_COLUMNS or key.startswith("hydra") or "=" not in override:
            continue
        value = OmegaConf.select(cfg, key)
        if OmegaConf.is_config(value):
            value = OmegaConf.to_container(value, resolve=True)
        column = key.replace(".", "_").replace("@", "_").lower()
        column = f"config_{column}" if column in _runner.ROW_COLUMNS else column
        if column in columns:
            raise ValueError(f"the overrides {sources[column]!r} and {override!r} both give "
                             f"column {column!r}; one column holds one value: pass only one.")
        columns[column], sources[column] = value, override
    return columns


@hydra.main(version_base="1.3", config_path=CONFIG_DIR, config_name="config")
def main(cfg):
    hydra_cfg = HydraConfig.get()
    try:
        with open_dict(cfg):
            if not cfg.results_dir:
                cfg.results_dir = hydra_cfg.runtime.output_dir
            cfg.columns = {**override_columns(cfg, hydra_cfg.overrides.task),
                           **OmegaConf.to_container(cfg.columns)}
        frame = run(cfg)
    except DataNotFoundError as error:  # the message says how to fix it: no traceback
        sys.exit(f"experiments.run: error: {error}")
    except ValueError as exc:  # a refused config: its message, no traceback
        sys.exit(f"experiments.run: error: {exc}")
    print(f"{cfg.experiment.name}: {len(frame)} rows -> "
          f"{Path(cfg.results_dir) / cfg.experiment.name}.csv")


if __name__ == "__main__":
    main()
