"""SSC warns at its iteration cap only where reaching it is not the method's design."""

import warnings

import pytest
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning

from kssc.baselines import SSC


@pytest.fixture(scope="module")
def digits():
    return load_digits(return_X_y=True)[0][:150]


def test_shared_relaxed_rule_runs_to_its_cap_quietly(digits):
    # The setting of examples/digits.py: its rule on the total objective stops at the cap.
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = SSC(n_clusters=10, tol=1e-4, random_state=0).fit(digits)
    assert model.n_iter_ == model.max_iter


@pytest.mark.parametrize("params", [{"column_wise": True}, {"solver": "exact"}],
                         ids=["per-point rule", "exact"])
def test_other_rules_warn_at_their_cap(digits, params):
    with pytest.warns(ConvergenceWarning, match="reached max_iter=3"):
        SSC(n_clusters=10, max_iter=3, random_state=0, **params).fit(digits)
