"""experiments._produce: the one writer of a benchmark's or a cross-check study's result, its
recorded inputs and the sidecar of a producer that resumes from an earlier CSV."""

import json

import pandas as pd
import pytest

from experiments import _checkout, _executed, _io, _produce, _staleness
from kssc.metrics import clustering_error

STARTED = "2026-01-01T00:00:00+00:00"


@pytest.fixture
def study(tmp_path):
    """A committed input CSV and a study's config recording it."""
    source = tmp_path / "synthetic.csv"
    pd.DataFrame({"trial": [0], "error_pct": [5.0]}).to_csv(source, index=False)
    config = {"experiment": {"name": "study", "draws": 2,
                             "input_files": _produce.input_files(source)}}
    return tmp_path, source, config


def write(results, config, rows=({"a": 1},)):
    with _executed.tracing():
        clustering_error([0, 1, 1], [1, 0, 0])
        _produce.write_result(pd.DataFrame(list(rows)), results / "study.csv", config,
                              started=STARTED, wall_time=1.0)


def test_input_files_are_repository_relative_or_absolute(study, tmp_path):
    _, source, _ = study
    found = _produce.input_files(source, _checkout.REPO_ROOT / "experiments" / "_io.py",
                                 tmp_path / "absent.csv")
    assert found[source.as_posix()] == _io.sha256_file(source)
    assert found["experiments/_io.py"] is not None
    assert found[(tmp_path / "absent.csv").as_posix()] is None


def test_a_study_is_current_until_its_input_changes(study):
    results, source, config = study
    write(results, config)
    assert _staleness.other_status(results, "study") == "current"
    source.write_text(source.read_text() + "1,6.0\n")
    assert _staleness.other_status(results, "study") == (
        f"input changed since it was computed: {source.as_posix()}")


def test_a_run_from_scratch_is_not_resumed(study):
    results, _, config = study
    assert _produce.resumed_from(results / "study.csv") is None


def test_resuming_rows_with_a_record_merges_both_records(study):
    results, _, config = study
    write(results, config)
    earlier = _produce.resumed_from(results / "study.csv")
    assert earlier["config"]["experiment"]["draws"] == 2
    later = {"experiment": {**config["experiment"], "draws": 3}}
    with _executed.tracing():
        _io.write_csv(pd.DataFrame({"a": [1, 2]}), results / "study.csv")
        _produce.write_resumed_sidecar(results / "study.csv", later, earlier, started=STARTED,
                                       wall_time=1.0)
    meta = json.loads((results / "study.meta.json").read_text())
    assert "kssc.metrics:clustering_error" in meta["executed"]["functions"]  # the earlier run's
    assert meta["resumed"][0]["experiment"]["draws"] == 2
    assert meta["config"]["experiment"]["draws"] == 3
    assert _staleness.other_status(results, "study") == "current"


def test_resuming_rows_computed_by_code_changed_since_leaves_the_result_stale(study):
    results, _, config = study
    write(results, config)
    sidecar = results / "study.meta.json"
    meta = json.loads(sidecar.read_text())
    meta["executed"]["functions"]["kssc.metrics:clustering_error"] = "0" * 16  # older code
    sidecar.write_text(json.dumps(meta))
    earlier = _produce.resumed_from(results / "study.csv")
    with _executed.tracing():
        clustering_error([0, 1, 1], [1, 0, 0])  # the resumed run executes today's code
        _produce.write_resumed_sidecar(results / "study.csv", config, earlier, started=STARTED,
                                       wall_time=1.0)
    assert "kssc.metrics:clustering_error changed" in _staleness.other_status(results, "study")


def test_resuming_rows_of_unknown_code_leaves_the_result_stale(study):
    results, _, config = study
    pd.DataFrame({"a": [1]}).to_csv(results / "study.csv", index=False)  # no sidecar
    earlier = _produce.resumed_from(results / "study.csv")
    assert earlier == {}
    with _executed.tracing():
        _produce.write_resumed_sidecar(results / "study.csv", config, earlier, started=STARTED,
                                       wall_time=1.0)
    meta = json.loads((results / "study.meta.json").read_text())
    assert meta["executed"] is None and meta["resumed"]
    assert "no execution record" in _staleness.other_status(results, "study")


def test_a_sidecar_that_does_not_bind_the_csv_does_not_vouch_for_its_rows(study):
    results, _, config = study
    write(results, config)
    (results / "study.csv").write_text("a\n7\n")
    assert _produce.resumed_from(results / "study.csv") == {}
