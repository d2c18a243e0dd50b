"""experiments._rerun and `suite --rerun`: a producer's sidecar records the command that ran
it (`_produce.traced_main`), and a stale benchmark or study is rerun by it, inputs first, its
files put back when the rerun fails or does not reproduce the recorded settings."""

import json

import pandas as pd
import pytest

from experiments import _executed, _io, _produce, _rerun, suite
from kssc.metrics import clustering_error

STARTED = "2026-01-01T00:00:00+00:00"


def producer(results, name, settings, inputs=()):
    """A producer's `main`: one CSV (its rows: `settings`' value and the run's number, as a
    timing differs between runs) and its sidecar, reading the CSVs `inputs` of the same
    folder."""
    runs = []

    def main(argv):
        runs.append(argv)
        clustering_error([0, 1, 1], [1, 0, 0])
        config = {"experiment": {"name": name, **settings, "input_files": _produce.input_files(
            *(results / f"{source}.csv" for source in inputs))}}
        _produce.write_result(pd.DataFrame({"value": [settings["value"]],
                                            "run": [len(runs)]}),
                              results / f"{name}.csv", config, started=STARTED, wall_time=1.0)
        return 0

    return main


def meta(results, name):
    return json.loads((results / f"{name}.meta.json").read_text())


def make_stale(results, name):
    """Pretend the result ran an older clustering_error."""
    sidecar = meta(results, name)
    sidecar["executed"]["functions"]["kssc.metrics:clustering_error"] = "0" * 16
    (results / f"{name}.meta.json").write_text(json.dumps(sidecar))


def test_traced_main_records_the_command_and_the_module_that_defines_main(tmp_path):
    assert _produce.traced_main(producer(tmp_path, "a", {"value": 1}), ["--n", 5]) == 0
    assert meta(tmp_path, "a")["commands"] == [[__name__, "--n", "5"]]
    from crosscheck.run import main  # what `python -m crosscheck` runs
    assert _produce.producer_command(main, ["--check"]) == ["crosscheck.run", "--check"]


def test_a_resumed_run_records_the_earlier_commands_first(tmp_path):
    _produce.traced_main(producer(tmp_path, "a", {"value": 1}), ["--draws", "2"])

    def resume(argv):
        earlier = _produce.resumed_from(tmp_path / "a.csv")
        _io.write_csv(pd.DataFrame({"value": [1, 2]}), tmp_path / "a.csv")
        _produce.write_resumed_sidecar(tmp_path / "a.csv", {"experiment": {"name": "a"}},
                                       earlier, started=STARTED, wall_time=1.0)
        return 0

    _produce.traced_main(resume, ["--draws", "3"])
    assert meta(tmp_path, "a")["commands"] == [[__name__, "--draws", "2"],
                                               [__name__, "--draws", "3"]]
    # Rows of a run that recorded no command: None stands for it, and the rerun refuses.
    sidecar = meta(tmp_path, "a")
    del sidecar["commands"]
    (tmp_path / "a.meta.json").write_text(json.dumps(sidecar))
    _produce.traced_main(resume, ["--draws", "4"])
    assert meta(tmp_path, "a")["commands"] == [None, [__name__, "--draws", "4"]]
    assert _rerun.rerun(tmp_path, ["a"], force=True, run=pytest.fail) == 1


@pytest.fixture
def two_results(tmp_path):
    """Results "a" and "b", b reading a's CSV, both current, with a `run` that reruns them
    by their recorded commands (here: the producers above) and logs the order."""
    settings = {"a": {"value": 1}, "b": {"value": 2}}
    mains = {"a": producer(tmp_path, "a", settings["a"]),
             "b": producer(tmp_path, "b", settings["b"], inputs=["a"])}
    for name in ("a", "b"):
        _produce.traced_main(mains[name], [name])
    assert _rerun.rerun(tmp_path, run=pytest.fail) == 0  # both current: nothing runs
    log = []

    def run(command):
        log.append(command)
        _produce.traced_main(mains[command[1]], command[1:])

    return tmp_path, mains, run, log


def test_a_stale_input_reruns_first_and_its_reader_after_it(two_results, capsys):
    results, _, run, log = two_results
    make_stale(results, "a")
    before = (results / "b.meta.json").read_text()
    assert _rerun.rerun(results, run=run) == 0
    assert log == [[__name__, "a"], [__name__, "b"]]  # b read a's CSV, rewritten by its rerun
    assert "b: rerunning (input changed" in capsys.readouterr().out
    assert (results / "b.meta.json").read_text() != before
    index = _executed.Index()
    assert all(_rerun._staleness.other_status(results, name, index) == "current"
               for name in ("a", "b"))
    assert not (results / _rerun.ASIDE / "a").exists()


def test_a_failed_rerun_puts_the_files_back_and_stops(two_results, capsys):
    results, _, _, _ = two_results
    make_stale(results, "a")
    files = {path.name: path.read_bytes() for path in results.glob("a*")}

    def fail(command):
        (results / "a.csv").write_text("half written\n")
        raise _rerun.RerunError("`python -m x` exited with status 1.")

    assert _rerun.rerun(results, run=fail) == 1
    assert {path.name: path.read_bytes() for path in results.glob("a*")} == files
    assert "rerun stopped: `python -m x` exited with status 1." in capsys.readouterr().out


def test_a_command_that_does_not_reproduce_the_settings_is_refused(two_results, capsys):
    results, mains, _, _ = two_results
    files = {path.name: path.read_bytes() for path in results.glob("a*")}

    def other(command):  # writes "a" with another setting than it was computed with
        _produce.traced_main(producer(results, "a", {"value": 7}), command[1:])

    assert _rerun.rerun(results, ["a"], force=True, run=other) == 1
    assert "the rerun's config differs from the committed one's" in capsys.readouterr().out
    assert {path.name: path.read_bytes() for path in results.glob("a*")} == files


def test_a_result_without_a_recorded_command_is_named(two_results, capsys):
    results, _, run, log = two_results
    sidecar = meta(results, "b")
    del sidecar["commands"]
    (results / "b.meta.json").write_text(json.dumps(sidecar))
    make_stale(results, "b")
    assert _rerun.rerun(results, run=run) == 1
    assert log == []
    assert "b: its sidecar records no command" in capsys.readouterr().out
    assert _rerun.rerun(results, ["c"]) == 1  # not a result of the folder


def test_inputs_that_form_a_cycle_are_refused(tmp_path):
    metas = {name: {"config": {"experiment": {"input_files": {
        str(tmp_path / f"{other}.csv"): None}}}} for name, other in (("a", "b"), ("b", "a"))}
    with pytest.raises(_rerun.RerunError, match="form a cycle"):
        _rerun.ordered(["a", "b"], metas, tmp_path)


def test_suite_rerun_reruns_the_named_benchmark_by_its_command(two_results, monkeypatch):
    results, _, run, log = two_results
    monkeypatch.setattr(_rerun, "run_command", run)
    argv = ["--rerun", "b", "--force", "--no-draw", "--results", str(results)]
    assert suite.main(argv) == 0
    assert log == [[__name__, "b"]]


def test_run_command_runs_the_module_at_the_root_and_raises_on_failure(capsys):
    _rerun.run_command(["experiments._rerun"])  # importable, runs nothing: exit 0
    with pytest.raises(_rerun.RerunError, match="exited with status 1"):
        _rerun.run_command(["experiments.no_such_module"])
    assert "$ python -m experiments.no_such_module" in capsys.readouterr().out


def test_a_budget_leaves_what_would_end_past_it_and_its_readers(two_results, capsys):
    results, _, run, log = two_results
    make_stale(results, "a")
    now = [0.0]
    budget = _rerun.Budget(0.5, clock=lambda: now[0])  # 30 s; each result's run took 1 s
    sidecar = meta(results, "a")
    sidecar["wall_time_s"] = 60.0
    (results / "a.meta.json").write_text(json.dumps(sidecar))
    assert _rerun.rerun(results, run=run, budget=budget) == 1
    out = capsys.readouterr().out
    assert "a: left for a later rerun: its last run took 1.0 min, more than the 0.5 min left" in out
    assert log == []
    make_stale(results, "b")  # b is stale too, but reads a: it waits
    assert _rerun.rerun(results, run=run, budget=budget) == 1
    assert "b: waits for its input a" in capsys.readouterr().out
    assert _rerun.rerun(results, run=run, budget=_rerun.Budget(2.0, clock=lambda: now[0])) == 0
    assert log == [[__name__, "a"], [__name__, "b"]]


def test_keep_going_reruns_the_rest_after_a_failure(two_results, capsys):
    results, mains, run, log = two_results
    make_stale(results, "a")
    mains["c"] = producer(results, "c", {"value": 3})
    _produce.traced_main(mains["c"], ["c"])
    make_stale(results, "c")
    make_stale(results, "b")

    def fail_a(command):
        if command[1] == "a":
            raise _rerun.RerunError("`python -m a` exited with status 2.")
        run(command)

    assert _rerun.rerun(results, run=fail_a, keep_going=True) == 1
    out = capsys.readouterr().out
    assert "b: waits for its input a" in out and "c: current after its rerun" in out
    assert "not rerun: a: failed: `python -m a` exited with status 2." in out
    assert log == [[__name__, "c"]]


def test_check_says_how_long_the_stale_results_took(two_results, capsys):
    results, _, _, _ = two_results
    make_stale(results, "a")
    sidecar = meta(results, "a")
    sidecar["wall_time_s"] = 600.0
    (results / "a.meta.json").write_text(json.dumps(sidecar))
    assert suite.check(results, "default", None) == 1
    out = capsys.readouterr().out  # the suite's experiments are missing from this folder
    missing = out.count(": missing\n")
    assert f"{missing + 1} not current; their last runs took 10 min in all" in out


def test_the_suites_experiments_keep_going_and_keep_to_the_budget(tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr(suite._staleness, "current_profile", lambda *a: (None, "missing"))
    monkeypatch.setattr(suite, "compose_config", lambda name, *a: name)
    monkeypatch.setattr(suite._config, "check_config", lambda cfg: cfg)
    monkeypatch.setattr(suite._runner, "load", lambda name: name)
    monkeypatch.setattr(suite._io, "read_meta", lambda results, name: {
        "wall_time_s": 3600.0 if name == "long" else 1.0})

    def run(cfg, spec, committed):
        ran.append(cfg)
        if cfg == "broken":
            raise RuntimeError("a trial failed")

    monkeypatch.setattr(suite._runner, "run_experiment", run)
    undone = suite.run_experiments(tmp_path, ["broken", "long", "short"], "default", False,
                                   _rerun.Budget(30.0), keep_going=True)
    assert ran == ["broken", "short"]
    assert undone["broken"] == "failed: RuntimeError: a trial failed"
    assert undone["long"].startswith("left for a later rerun: its last run took 60.0 min")
    with pytest.raises(RuntimeError, match="a trial failed"):
        suite.run_experiments(tmp_path, ["broken"], "default", False)


def test_the_files_a_killed_rerun_set_aside_are_put_back_first(two_results, capsys):
    results, _, run, log = two_results
    files = {path.name: path.read_bytes() for path in results.glob("a*")}
    _rerun.set_aside(results, "a")  # then the process was killed
    assert not (results / "a.csv").exists()
    assert _rerun.rerun(results, run=run) == 0
    assert "a: put back the files a killed rerun had set aside" in capsys.readouterr().out
    assert {path.name: path.read_bytes() for path in results.glob("a*")} == files
    assert log == [] and not (results / _rerun.ASIDE / "a").exists()
