"""The shared fit's stage timings (kssc._base): the keys docs/architecture.md states, nested."""

import pytest

from kssc import KSSC
from kssc.baselines import GFS, GSC, SSC, SSSC, TSC
from kssc.datasets import make_subspaces

# Every estimator's timings_ keys; a stage inside "representation" is listed before it.
KEYS = {
    "KSSC": (KSSC(3, n_neighbors=6, random_state=0), ["neighbours", "coefficients"]),
    "SSC": (SSC(3, tol=1e-4, random_state=0), []),
    "GFS": (GFS(3, k_max=3, random_state=0), ["selection"]),
    "GSC": (GSC(3, n_neighbors=5, random_state=0), ["neighbours"]),
    "TSC": (TSC(3, n_neighbors=5, random_state=0), ["neighbours"]),
    "SSSC": (SSSC(3, n_in_sample=30, random_state=0), ["spectral"]),
}


@pytest.mark.parametrize("name", KEYS)
def test_timings_have_the_documented_keys_and_stages_nest(name):
    estimator, inner = KEYS[name]
    X, _, _ = make_subspaces(3, 3, 20, 10, random_state=0)
    timings = estimator.fit(X).timings_
    assert set(timings) == {*inner, "representation", "spectral", "total"}
    assert all(t >= 0 for t in timings.values())
    # Inner stages run inside "representation"; SSSC's "spectral" is one of them.
    assert sum(timings[key] for key in inner) <= timings["representation"]
    outer = ["representation"] + ([] if "spectral" in inner else ["spectral"])
    assert sum(timings[key] for key in outer) <= timings["total"]
