"""Regenerate the paper's results and the measurements beyond it (what `make figures` runs).

Runs every experiment whose results are missing or stale, then draws every figure from the
CSVs and writes results/REPORT.md (and, when it wrote the committed results/, README's result
tables: experiments/readme.py). An experiment's results are current when
results/<name>.csv exists and the fingerprint in its sidecar (results/<name>.meta.json,
written with the CSV by whichever run computed it) equals the fingerprint of the config
this suite would run: its composed config and the code that computes its results (kssc/, the
runner machinery and the experiment's module; `_fingerprint.result_sources`).
So a fresh clone with the committed results redraws the figures without recomputing; a
config or code change, or results written by a run with another config (a smoke run, an
override), are recomputed. The full protocol covers the default one: results that are
current for profile=paper count as current when profile=default is asked for (COVERED_BY), so
`make figures` never replaces the committed paper-protocol results by fewer trials.

The experiments run are those of conf/experiment/ except the ones whose config says
`feeds.in_suite: false` (long benchmarks run on request with --only).

Usage: python -m experiments.suite [--profile default] [--only NAME ...] [--force]
"""

import argparse
from pathlib import Path

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from experiments import _config, _fingerprint, _io, _runner, plot, readme, report

CONFIG_DIR = str(_config.CONF_DIR)


def in_suite(name):
    """Whether `make figures` runs experiment `name` (its config's feeds.in_suite, default yes)."""
    conf = OmegaConf.load(_config.CONF_DIR / "experiment" / f"{name}.yaml")
    return bool(OmegaConf.select(conf, "feeds.in_suite", default=True))


def compose_config(name, profile, overrides=()):
    """The config `python experiments/run.py experiment=NAME profile=PROFILE` would run."""
    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        return compose("config", overrides=[f"experiment={name}", f"profile={profile}",
                                            *overrides])


# Profiles whose results also answer a run of the key profile (more trials of the same cells).
COVERED_BY = {"default": ("paper",)}


def is_current(results, name, cfg):
    """Whether results/<name>.csv exists and its sidecar's fingerprint is that of `cfg`."""
    meta = _io.read_meta(results, name)
    return ((Path(results) / f"{name}.csv").exists() and meta is not None
            and meta.get("fingerprint") == _fingerprint.fingerprint(cfg))


def current_profile(results, name, profile):
    """The profile (`profile` itself or one in COVERED_BY) whose config results/<name>.csv
    was computed with, by this code; None when the results are missing or stale."""
    for candidate in (profile, *COVERED_BY.get(profile, ())):
        cfg = compose_config(name, candidate, [f"results_dir={results}"])
        if is_current(results, name, cfg):
            return candidate
    return None


def main(argv=None):
    names = _config.experiment_names()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="default", choices=("smoke", "default", "paper"))
    parser.add_argument("--only", nargs="+", choices=names,
                        default=[name for name in names if in_suite(name)])
    parser.add_argument("--force", action="store_true", help="rerun even if current")
    parser.add_argument("--results", default="results")
    parser.add_argument("--figures", default="figures")
    args = parser.parse_args(argv)

    results = Path(args.results)
    for name in args.only:
        cfg = _config.check_config(compose_config(name, args.profile, [f"results_dir={results}"]))
        done = None if args.force else current_profile(results, name, args.profile)
        if done is not None:
            stamp = _io.read_meta(results, name)["fingerprint"]
            print(f"{name}: results current (profile={done}, {stamp}), not recomputed")
            continue
        print(f"{name}: running (profile={args.profile})", flush=True)
        _runner.run_experiment(cfg, _runner.load(name))
    plot.main(["--results", str(results), "--figures", args.figures])
    report.main(["--results", str(results)])
    if results.resolve() == readme.RESULTS_DIR:  # the committed results: README's tables follow
        readme.main([])


if __name__ == "__main__":
    main()
