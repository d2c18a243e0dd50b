"""Regenerate the paper's results (what `make figures` runs).

Runs every experiment whose results are missing or stale, then draws every figure from the
CSVs and writes results/REPORT.md. An experiment's results are current when
results/<name>.csv exists and the fingerprint recorded beside it matches the composed
config and the code that computes results (kssc/, baselines/, experiments/ but for the
plotting and report modules). So a fresh clone with the committed results redraws the
figures without recomputing, and any change to a config or to that code reruns what it
touches.

Usage: python -m experiments.suite [--profile default] [--only NAME ...] [--force]
"""

import argparse
import hashlib
import json
from pathlib import Path

from hydra import compose, initialize_config_dir

from experiments import _io, plot, report
from experiments._runner import EXPERIMENTS, _hash_config, config_as_dict
from experiments.run import CONFIG_DIR, run

# Modules that only read results: editing them never makes a CSV stale.
_READERS = {"plot.py", "report.py", "suite.py"}
FINGERPRINTS = "FINGERPRINTS.json"


def code_digest():
    """Hash of the source files that compute results."""
    digest = hashlib.sha256()
    for folder in ("kssc", "baselines", "experiments"):
        for path in sorted((_io.REPO_ROOT / folder).rglob("*.py")):
            if path.name not in _READERS:
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
    parser.add_argument("--only", nargs="+", choices=EXPERIMENTS, default=list(EXPERIMENTS))
    parser.add_argument("--force", action="store_true", help="rerun even if current")
    parser.add_argument("--results", default="results")
    parser.add_argument("--figures", default="figures")
    args = parser.parse_args(argv)

    results = Path(args.results)
    record_path = results / FINGERPRINTS
    record = json.loads(record_path.read_text()) if record_path.exists() else {}
    code = code_digest()
    for name in args.only:
        cfg = compose_config(name, args.profile, [f"results_dir={results}"])
        current = fingerprint(cfg, code)
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
