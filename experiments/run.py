"""Run one experiment: `python experiments/run.py experiment=NAME [profile=smoke|default|paper]`.

Thin Hydra entry point: composes `conf/`, then calls `experiments.<NAME>.run(cfg)`, which
writes `results/<NAME>.csv` and its sidecar `results/<NAME>.meta.json`.
"""

import importlib
import sys
from pathlib import Path

import hydra

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from experiments._runner import check_config  # noqa: E402

CONFIG_DIR = str(Path(__file__).resolve().parent.parent / "conf")


def run(cfg):
    """Dispatch a composed config to its experiment module; returns the results DataFrame."""
    cfg = check_config(cfg)
    module = importlib.import_module(f"experiments.{cfg.experiment.name}")
    return module.run(cfg)


@hydra.main(version_base="1.3", config_path=CONFIG_DIR, config_name="config")
def main(cfg):
    frame = run(cfg)
    print(f"{cfg.experiment.name}: {len(frame)} rows -> {Path(cfg.results_dir) / cfg.experiment.name}.csv")


if __name__ == "__main__":
    main()
