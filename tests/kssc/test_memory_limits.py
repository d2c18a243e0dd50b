"""The limits a fit runs under (machine, cgroup, address space) and the fit's memory check."""

import resource
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kssc.estimator as estimator
import kssc.neighbors._memory as memory
from kssc import KSSC
from kssc.neighbors._memory import FitMemoryError

GIB = 2**30


def _write(folder, files):
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_cgroup_v2_limit_less_usage_without_inactive_page_cache(tmp_path):
    root = tmp_path / "cgroup"
    _write(root, {"job/memory.max": f"{4 * GIB}\n", "job/memory.current": f"{GIB}\n",
                  "job/memory.stat": f"anon 100\ninactive_file {GIB // 4}\n",
                  "memory.max": "max\n", "memory.current": f"{8 * GIB}\n"})
    _write(tmp_path, {"proc": "0::/job\n"})
    free, limit = memory.cgroup_available(str(root), str(tmp_path / "proc"))
    assert limit == 4 * GIB and free == 4 * GIB - (GIB - GIB // 4)


def test_cgroup_v2_parent_with_less_room_binds(tmp_path):
    root = tmp_path / "cgroup"
    _write(root, {"a/b/memory.max": f"{4 * GIB}\n", "a/b/memory.current": f"{GIB}\n",
                  "a/memory.max": f"{2 * GIB}\n", "a/memory.current": f"{GIB}\n"})
    _write(tmp_path, {"proc": "0::/a/b\n"})
    assert memory.cgroup_available(str(root), str(tmp_path / "proc")) == (GIB, 2 * GIB)


def test_cgroup_v1_limit_and_no_limit(tmp_path):
    root = tmp_path / "cgroup"
    _write(root, {"memory/memory.limit_in_bytes": f"{3 * GIB}\n",
                  "memory/memory.usage_in_bytes": f"{2 * GIB}\n",
                  "memory/memory.stat": f"cache 5\ntotal_inactive_file {GIB // 2}\n"})
    # Inside a container the path /proc/self/cgroup names is the host's: the mount is taken.
    _write(tmp_path, {"proc": "4:memory:/docker/abc\n0::/\n"})
    assert memory.cgroup_available(str(root), str(tmp_path / "proc")) == (
        3 * GIB - (2 * GIB - GIB // 2), 3 * GIB)
    (root / "memory/memory.limit_in_bytes").write_text("9223372036854771712\n")
    assert memory.cgroup_available(str(root), str(tmp_path / "proc")) is None
    assert memory.cgroup_available(str(tmp_path / "absent"), str(tmp_path / "absent")) is None


def test_address_space_limit_less_what_is_mapped(monkeypatch):
    monkeypatch.setattr(memory.resource, "getrlimit", lambda which: (7 * GIB, 7 * GIB))
    monkeypatch.setattr(memory, "virtual_size", lambda: 3 * GIB)
    assert memory.address_space_available() == (4 * GIB, 7 * GIB)
    monkeypatch.setattr(memory.resource, "getrlimit",
                        lambda which: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    assert memory.address_space_available() is None
    assert memory.virtual_size() > 0  # this process's own


def test_the_smallest_limit_binds_and_is_named(monkeypatch):
    monkeypatch.setattr(memory, "available_memory", lambda: 20 * GIB)
    monkeypatch.setattr(memory, "cgroup_available", lambda: (3 * GIB, 4 * GIB))
    monkeypatch.setattr(memory, "address_space_available", lambda: (5 * GIB, 7 * GIB))
    free, which = memory.memory_limit()
    assert free == 3 * GIB and "cgroup" in which and "4.00 GiB" in which
    monkeypatch.setattr(memory, "address_space_available", lambda: (GIB, 7 * GIB))
    free, which = memory.memory_limit()
    assert free == GIB and "RLIMIT_AS" in which and "7.00 GiB" in which
    for reader in ("available_memory", "cgroup_available", "address_space_available"):
        monkeypatch.setattr(memory, reader, lambda: None)
    assert memory.memory_limit() == (None, None)


def test_fit_is_refused_before_the_unit_row_copy(monkeypatch):
    # The fit's whole estimate is checked before its first copy: the copy is never made.
    def no_copy(*args, **kwargs):
        raise AssertionError("the unit rows were copied before the memory check")

    monkeypatch.setattr(memory, "memory_limit",
                        lambda: (GIB // 8, "0.12 GiB is left under the cgroup's limit"))
    monkeypatch.setattr(estimator, "unit_rows", no_copy)
    X = np.random.default_rng(0).standard_normal((3000, 16)).astype(np.float32)
    with pytest.raises(FitMemoryError, match=r"not enough memory: KSSC.fit of 3000 x 16 "
                       r"float32 points .* per stage: unit rows .*, neighbours .*, "
                       r"coefficients .*, spectral .*\) and 0.12 GiB is left under the "
                       r"cgroup's limit"):
        KSSC(2, n_neighbors=5).fit(X)


def test_fit_estimate_counts_the_copy_and_grows_with_the_candidates():
    small = memory.kssc_fit_memory(10**6, 64, 4, 20, 0)
    assert small["unit rows"] == 4 * 64 * 10**6
    assert memory.kssc_fit_memory(10**6, 64, 4, 20, 0, copy=False)["unit rows"] == 0
    more = memory.kssc_fit_memory(10**6, 64, 4, 40, 0)
    for stage in ("coefficients", "spectral"):
        assert more[stage] - small[stage] >= 20 * 8 * 10**6  # at least the candidates
    assert memory.kssc_fit_memory(10**6, 64, 4, 20, 5 * GIB)["neighbours"] > 5 * GIB


def test_fit_under_a_small_address_space_limit_is_refused_quickly(tmp_path):
    # A child process whose address space may grow by 64 MiB only: the fit is refused
    # before it allocates, with a message naming memory and the limit, not killed.
    script = textwrap.dedent("""
        import resource, sys
        import numpy as np
        from kssc import KSSC
        from kssc.neighbors._memory import virtual_size
        X = np.random.default_rng(0).standard_normal((20000, 32)).astype(np.float32)
        limit = virtual_size() + 64 * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.RLIM_INFINITY))
        try:
            KSSC(5, n_neighbors=10).fit(X)
        except MemoryError as error:
            print(type(error).__name__, error)
            sys.exit(3)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 3, done.stderr[-2000:]
    assert done.stdout.startswith("FitMemoryError not enough memory: KSSC.fit of 20000 x 32")
    assert "RLIMIT_AS" in done.stdout
