"""The shared fit's stage timings (kssc._base): the keys docs/architecture.md states, nested."""

import pytest

from kssc import KSSC
from kssc.baselines import BASELINES
from kssc.datasets import make_subspaces

ESTIMATORS = {"KSSC": KSSC(3, n_neighbors=6, random_state=0),
              **{cls.__name__: cls(3, random_state=0, **small)
                 for cls, small in BASELINES.values()}}
# The timings_ keys of the stages inside "representation", where an estimator has some.
INNER = {"KSSC": ["neighbours", "coefficients"], "GFS": ["selection"], "GSC": ["neighbours"],
         "TSC": ["neighbours"], "SSSC": ["spectral"]}


@pytest.mark.parametrize("name", ESTIMATORS)
def test_timings_have_the_documented_keys_and_stages_nest(name):
    estimator, inner = ESTIMATORS[name], INNER.get(name, [])
    X, _, _ = make_subspaces(3, 3, 20, 10, random_state=0)
    timings = estimator.fit(X).timings_
    assert set(timings) == {*inner, "representation", "spectral", "total"}
    assert all(t >= 0 for t in timings.values())
    # Inner stages run inside "representation"; SSSC's "spectral" is one of them.
    assert sum(timings[key] for key in inner) <= timings["representation"]
    outer = ["representation"] + ([] if "spectral" in inner else ["spectral"])
    assert sum(timings[key] for key in outer) <= timings["total"]
