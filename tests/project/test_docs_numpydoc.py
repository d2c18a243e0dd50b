"""Every public object of kssc, kssc.datasets and baselines has a complete numpydoc docstring.

The public objects are those in each package's `__all__` (constants excepted: a tuple has no
docstring of its own), plus the `fit` and `fit_predict` of every public estimator. Each is run
through numpydoc's validator; the error codes in ENFORCED fail the test. Codes not enforced
(every other code of numpydoc 1.11 is):

- ES01: an extended summary is optional; short functions say all in their summary line.
- SS05: a summary may be a noun phrase ("Points drawn from ..."), not only a verb.
- RT02: a single return value may carry a name (``labels : ndarray``), as in
  scikit-learn.
- SA04: a See Also entry may go without a description when its name says it all.
- EX01, SA01 on fit/fit_predict: their class carries the Examples and See Also.

The examples in these docstrings run as doctests here as well, and every attribute an
estimator sets in `fit` must be described in its Attributes section.
"""

import doctest
import importlib
import inspect
import warnings

import numpy as np
import pytest

pytest.importorskip("numpydoc", reason="needs the docs extra: pip install '.[docs]'")
from numpydoc.docscrape import ClassDoc
from numpydoc.validate import Validator, validate

PACKAGES = ("kssc", "kssc.datasets", "kssc.distributed", "kssc.baselines")
ENFORCED = {
    "GL01", "GL02", "GL03", "GL05", "GL06", "GL07", "GL08", "GL09", "GL10",
    "SS01", "SS02", "SS03", "SS04", "SS06",
    "PR01", "PR02", "PR03", "PR04", "PR05", "PR06", "PR07", "PR08", "PR09", "PR10",
    "RT01", "RT03", "RT04", "RT05",
    "YD01",
    "SA01", "SA02", "SA03",
    "EX01",
}
METHOD_EXEMPT = {"EX01", "SA01"}


def _public_objects():
    names = []
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                names.append(f"{package}.{name}")
    return names


def _estimators():
    found = []
    for name in _public_objects():
        package, attr = name.rsplit(".", 1)
        obj = getattr(importlib.import_module(package), attr)
        if inspect.isclass(obj) and hasattr(obj, "fit"):
            found.append(name)
    return found


PUBLIC = _public_objects()
METHODS = [f"{name}.{method}" for name in _estimators() for method in ("fit", "fit_predict")]


def _resolve(name):
    return Validator._load_obj(name)


def test_public_objects_are_found():
    assert len(PUBLIC) >= 29
    assert {"kssc.KSSC", "kssc.baselines.SSC", "kssc.datasets.load_yaleb"} <= set(PUBLIC)


@pytest.mark.parametrize("name", PUBLIC + METHODS)
def test_numpydoc_validates(name):
    enforced = ENFORCED - METHOD_EXEMPT if name in METHODS else ENFORCED
    errors = [f"{code}: {message}" for code, message in validate(name)["errors"]
              if code in enforced]
    assert not errors, f"{name}:\n" + "\n".join(errors)


@pytest.mark.parametrize("name", PUBLIC)
def test_docstring_examples_run(name):
    obj = _resolve(name)
    tests = doctest.DocTestFinder(recurse=False).find(obj, name, globs={})
    assert tests and tests[0].examples, f"{name} has no Examples to run"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for test in tests:
            runner.run(test)
    assert runner.failures == 0, f"{name}: {runner.failures} failing example(s), see output"


@pytest.mark.parametrize("name", _estimators())
def test_fitted_attributes_are_documented(name):
    estimator = _resolve(name)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = estimator(n_clusters=2, random_state=0).fit(X)
    learned = {key for key in vars(fitted) if key.endswith("_") and not key.startswith("_")}
    learned |= {key for key, value in vars(estimator).items()  # fitted state as a property
                if isinstance(value, property) and key.endswith("_") and not key.startswith("_")}
    documented = {item.name for item in ClassDoc(estimator)["Attributes"]}
    assert learned - documented == set(), f"undocumented attributes of {name}"
    assert documented - learned == set(), f"documented but never set in {name}.fit"
