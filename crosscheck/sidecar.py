"""The cross-check's sidecar, and whether its CSV is current: the suite's one rule.

`results/crosscheck.csv` and its sidecar are written through the harness's one writer
(`experiments._produce.write_sidecar`: revision, packages, config, timing, `files` binding
the CSV's SHA-256, and the execution record of the run: the Python functions, kernels,
constants and data lists it executed). Its fingerprint is the hash of the config: the
check's settings and inputs. The CSV is current when the sidecar binds it, the settings and
inputs are the check's, and nothing it executed changed (`experiments._executed.changes`);
`python -m crosscheck --check` and `python -m experiments.suite --check` say so.
"""

from pathlib import Path

from experiments import _executed, _fingerprint, _io, _produce
from experiments._checkout import REPO_ROOT

NAME = "crosscheck"


def crosscheck_config(settings, inputs):
    """The config a sidecar records and the fingerprint hashes: settings and inputs."""
    return {"experiment": {"name": NAME, "trials": 1, "settings": dict(settings),
                           "inputs": {name: dict(spec) for name, spec in inputs.items()}}}


def fingerprint(config):
    """The hash of the config (settings and inputs) a sidecar records as its fingerprint."""
    return _io.config_hash(_fingerprint.result_config(config))


def sidecar_path(csv_path):
    """`<folder>/<stem>.meta.json` beside the CSV."""
    csv_path = Path(csv_path)
    return csv_path.with_name(f"{csv_path.stem}.meta.json")


def write_sidecar(csv_path, config, *, started, wall_time, extra=None):
    """Write the sidecar of an already written CSV (`_produce.write_sidecar`)."""
    _produce.write_sidecar(csv_path, config, started=started, wall_time=wall_time, extra=extra)


def staleness(csv_path, config):
    """Why the CSV is not current for `config` and this code, or None when it is."""
    csv_path, meta_path = Path(csv_path), sidecar_path(csv_path)
    if not csv_path.exists():
        return "no CSV"
    if not meta_path.exists():
        return "no sidecar"
    meta = _io.read_meta(meta_path.parent, meta_path.name.removesuffix(".meta.json"))
    if meta is None:
        return "the sidecar is unreadable"
    if (meta.get("files") or {}).get(csv_path.name) != _io.sha256_file(csv_path):
        return "the CSV differs from the one the sidecar was written with"
    recorded = str(meta.get("fingerprint", "")).split("-")[0]
    if recorded != fingerprint(meta.get("config") or {}):
        return "the sidecar's fingerprint is not that of its own config"
    if recorded != fingerprint(config):
        return "the settings or inputs differ from the ones it was run with"
    if not meta.get("executed"):
        return "the sidecar has no execution record: run make crosscheck"
    changed = _executed.changes(meta["executed"])
    if changed:
        return f"{'; '.join(changed[:3])}: run make crosscheck"
    return None


def is_current(results_dir=REPO_ROOT / "results"):
    """Whether `results_dir/crosscheck.csv` is current for the check's settings, inputs and code."""
    from .inputs import INPUTS, SETTINGS

    return staleness(Path(results_dir) / f"{NAME}.csv", crosscheck_config(SETTINGS, INPUTS)) is None
