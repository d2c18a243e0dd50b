"""Regenerate the paper's results and the scale measurements (what `make figures` runs).

Runs every experiment whose results are missing or stale, then draws every figure from the
CSVs and writes results/REPORT.md. An experiment's results are current when
results/<name>.csv exists and the fingerprint recorded beside it matches the composed
config and the code that computes its results (kssc/, baselines/, the experiment machinery,
its own module and the modules its config instantiates; see `result_sources`). So a fresh
clone with the committed results redraws the figures without recomputing, and any change to
a config or to that code reruns what it touches.

Usage: python -m experiments.suite [--profile default] [--only NAME ...] [--force]
"""

import argparse
import hashlib
import json
import re
from pathlib import Path

from hydra import compose, initialize_config_dir

from experiments import _io, plot, report
from experiments._runner import EXPERIMENTS, _hash_config, config_as_dict
from experiments.run import CONFIG_DIR, run

_IMPORT = re.compile(r"^from (?:experiments\.|\.)(\w+) import|^from (?:experiments|\.) import (\w+)", re.M)
FINGERPRINTS = "FINGERPRINTS.json"
# Beyond the paper, the standard benchmarks with a tuned configuration (docs/tuned_accuracy.md,
# about 23 minutes): run on request (--only hopkins155 yale_subjects), not by `make figures`.
TUNED = ("hopkins155", "yale_subjects")
# What `make figures` runs: the paper's experiments and `scale` (10^4 to 10^6 points).
PAPER = tuple(name for name in EXPERIMENTS if name not in TUNED)


def result_sources(name, cfg=None):
    """The files whose code computes experiment `name`'s results.

    The packages, the trial machinery (experiments/_runner.py, _io.py), the experiment's
    module, the experiment modules it imports and those the config's `_target_`s name (the
    tuned estimators of experiments/_tuned.py): adding or editing another experiment leaves
    this one current.
    """
    root = _io.REPO_ROOT
    files = {*root.joinpath("kssc").rglob("*.py"), *root.joinpath("baselines").rglob("*.py"),
             *(root / "experiments" / f for f in ("__init__.py", "_runner.py", "_io.py"))}
    todo = [root / "experiments" / f"{name}.py"]
    if cfg is not None:
        todo += [root / "experiments" / f"{target.split('.')[1]}.py"
                 for target in _targets(config_as_dict(cfg)) if target.startswith("experiments.")]
    while todo:
        path = todo.pop()
        if path in files or not path.exists():
            continue
        files.add(path)
        for groups in _IMPORT.findall(path.read_text()):
            todo += [root / "experiments" / f"{module}.py" for module in groups if module]
    return sorted(files)


def _targets(node):
    """Every `_target_` value in a config tree."""
    if isinstance(node, dict):
        own = [node["_target_"]] if "_target_" in node else []
        return own + [t for v in node.values() for t in _targets(v)]
    if isinstance(node, list):
        return [t for v in node for t in _targets(v)]
    return []


def code_digest(name, cfg=None):
    """Hash of the source files that compute experiment `name`'s results (with config `cfg`)."""
    digest = hashlib.sha256()
    for path in result_sources(name, cfg):
        digest.update(str(path.relative_to(_io.REPO_ROOT)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def compose_config(name, profile, overrides=()):
    """The config `python experiments/run.py experiment=NAME profile=PROFILE` would run."""
    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        return compose("config", overrides=[f"experiment={name}", f"profile={profile}",
                                            *overrides])


def fingerprint(cfg, code):
    return f"{_hash_config(config_as_dict(cfg))}-{code}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="default", choices=("smoke", "default", "paper"))
    parser.add_argument("--only", nargs="+", choices=EXPERIMENTS, default=list(PAPER))
    parser.add_argument("--force", action="store_true", help="rerun even if current")
    parser.add_argument("--results", default="results")
    parser.add_argument("--figures", default="figures")
    args = parser.parse_args(argv)

    results = Path(args.results)
    record_path = results / FINGERPRINTS
    record = json.loads(record_path.read_text()) if record_path.exists() else {}
    for name in args.only:
        cfg = compose_config(name, args.profile, [f"results_dir={results}"])
        current = fingerprint(cfg, code_digest(name, cfg))
        if not args.force and (results / f"{name}.csv").exists() and record.get(name) == current:
            print(f"{name}: results current ({current}), not recomputed")
            continue
        print(f"{name}: running (profile={args.profile})", flush=True)
        run(cfg)
        record[name] = current
        _io.write_json(record, record_path)
    plot.main(["--results", str(results), "--figures", args.figures])
    report.main(["--results", str(results)])


if __name__ == "__main__":
    main()
