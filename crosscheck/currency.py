"""The cross-check's sidecar, and whether its CSV is current with the solvers it compares.

`results/crosscheck.meta.json` is written like every experiment's (`experiments._io.write_meta`:
revision, packages, config, timing, and `files` binding the CSV's SHA-256). Its fingerprint is
`<config hash>-<code hash>`: the config is the check's settings and inputs, the code hash
covers the result code of kssc/ (as `experiments._fingerprint` delimits it: less
NOT_RESULT_CODE, plus the data sets' checksum lists), the method configs our side is built
from, the cross-check's own modules that compute the table, and the computing packages'
versions. Any change to a solver therefore
makes the CSV stale until `make crosscheck` is run again; `python -m crosscheck --check` says so.
"""

import hashlib
from pathlib import Path

from experiments import _fingerprint, _io
from experiments._checkout import REPO_ROOT

NAME = "crosscheck"
# The crosscheck/ modules that compute results/crosscheck.csv (not the gap studies, not this).
OWN_CODE = ("run.py", "inputs.py", "compare.py", "octave.py", "environment.py")
# The method configs our side is built from (`run.paper_method`).
METHOD_CONFIGS = ("kssc", "kssc_exact", "ssc", "ssc_relaxed_par", "ssc_exact", "ssc_exact_par",
                  "gfs", "gsc", "tsc", "sssc")


def crosscheck_config(settings, inputs):
    """The config a sidecar records and the fingerprint hashes: settings and inputs."""
    return {"experiment": {"name": NAME, "trials": 1, "settings": dict(settings),
                           "inputs": {name: dict(spec) for name, spec in inputs.items()}}}


def result_sources(root=REPO_ROOT):
    """The files whose code computes the cross-check's table, sorted."""
    kssc = {path for path in root.joinpath("kssc").rglob("*.py")
            if not path.relative_to(root).as_posix().startswith(_fingerprint.NOT_RESULT_CODE)}
    data = {path for folder in _fingerprint.DATA_FILES for path in root.joinpath(folder).rglob("*")
            if path.is_file()}
    own = {root / "crosscheck" / name for name in OWN_CODE}
    confs = {root / "conf" / "method" / f"{name}.yaml" for name in METHOD_CONFIGS}
    return sorted(kssc | data | {path for path in own | confs if path.exists()})


def code_digest(root=REPO_ROOT):
    """Hash of `result_sources` (path and bytes) and the computing packages' versions."""
    digest = hashlib.sha256()
    for path in result_sources(root):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    versions = _io.package_versions(_fingerprint.COMPUTING_PACKAGES)
    digest.update(repr(sorted(versions.items())).encode())
    return digest.hexdigest()[:16]


def fingerprint(config):
    """`<config hash>-<code hash>` of the table this config computes with this code."""
    return f"{_io.config_hash(_fingerprint.result_config(config))}-{code_digest()}"


def sidecar_path(csv_path):
    """`<folder>/<stem>.meta.json` beside the CSV."""
    csv_path = Path(csv_path)
    return csv_path.with_name(f"{csv_path.stem}.meta.json")


def write_sidecar(csv_path, config, *, started, wall_time, extra=None):
    """Write the sidecar of an already written CSV, bound to its SHA-256."""
    csv_path = Path(csv_path)
    files = {csv_path.name: _io.sha256_file(csv_path)}
    _io.write_meta(config, sidecar_path(csv_path), fingerprint=fingerprint(config),
                   started=started, wall_time=wall_time, extra={**(extra or {}), "files": files})


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
    if meta.get("files") != {csv_path.name: _io.sha256_file(csv_path)}:
        return "the CSV differs from the one the sidecar was written with"
    recorded = str(meta.get("fingerprint", "")).split("-")
    if recorded[0] != _io.config_hash(_fingerprint.result_config(meta.get("config") or {})):
        return "the sidecar's fingerprint is not that of its own config"
    wanted_config, wanted_code = fingerprint(config).split("-")
    if recorded[0] != wanted_config:
        return "the settings or inputs differ from the ones it was run with"
    if recorded[-1] != wanted_code:
        return (f"the solvers' code differs from the code that wrote it (code digest "
                f"{recorded[-1]} recorded, {wanted_code} now): run make crosscheck")
    return None


def is_current(results_dir=REPO_ROOT / "results"):
    """Whether `results_dir/crosscheck.csv` is current for the check's settings, inputs and code."""
    from .inputs import INPUTS, SETTINGS

    return staleness(Path(results_dir) / f"{NAME}.csv", crosscheck_config(SETTINGS, INPUTS)) is None
