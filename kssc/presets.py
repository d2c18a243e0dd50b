"""Named settings of `KSSC`, each exactly as validated (docs/presets.md).

``KSSC(n_clusters, **preset_params("faces"))`` is the face setting; every value can still be
overridden by a keyword after it. A preset is a plain dict of `KSSC` parameters that states
every setting deciding the result, so `clone`, `get_params` and pickling see ordinary
parameters and a change of KSSC's defaults cannot move a preset. Each one equals the method
config its experiment validated (tests/kssc/test_presets.py composes those configs).
"""

from .coding.admm import ADMM

PAPER_SETTING = {"lam": 0.1, "lam_mode": "absolute", "solver": "relaxed", "positive": True,
                 "threshold": None, "affinity": "symmetric", "metric": "euclidean",
                 "assign_labels": "discretize", "max_iter": 200}
"""The KSSC parameters of the paper's code (`kssc_relaxed_par`, N-Cut) where the generic
setting differs: ``KSSC(n_clusters, n_neighbors=k, **PAPER_SETTING)`` is the paper's k-SSC."""

# conf/method/kssc_generic.yaml: Elhamifar and Vidal's lasso model on the 20 nearest by
# absolute cosine, FISTA to convergence, max-normalised rows, N-Cut (generic_selection).
_GENERIC = {"n_neighbors": 20, "neighbor_pcs": 0, "n_random": 0, "lam": 0.00125,
            "lam_mode": "global", "l1_ratio": 1.0, "solver": "relaxed", "positive": False,
            "normalize": True, "threshold": None, "affinity": "max_normalized",
            "metric": "abs_cosine", "neighbor_algorithm": "auto", "assign_labels": "discretize",
            "tol": 1e-6, "max_iter": 1000}


def _tuned(**params):
    """conf/method/kssc_tuned.yaml (Elhamifar and Vidal's model, ADMM, thrC, NJW) with `params`."""
    solver = {"affine": False, "outlier": False, "stopping": "all", "tol": 2e-4,
              "max_iter": 200, **params.pop("solver", {})}
    return {**_GENERIC, "neighbor_algorithm": "exact", "assign_labels": "njw", "max_iter": 200,
            **params, "solver": ADMM(**solver)}


def _presets():
    return {
        # The general-purpose setting (chosen on synthetic unions of subspaces).
        "generic": dict(_GENERIC),
        # The paper's code (kssc_relaxed_par with N-Cut), k = 20: conf/method/kssc.yaml.
        "paper": {**_GENERIC, **PAPER_SETTING},
        # conf/experiment/yale_grouped.yaml's kssc_face, chosen on Yale B subject group 1.
        "faces": _tuned(n_neighbors=30, n_random=30, neighbor_pcs=5, metric="abs_cosine",
                        lam=0.05, solver={"outlier": True}, normalize=False),
        # conf/experiment/hopkins155_cv.yaml's kssc_views, chosen by grouped 5-fold CV.
        "motion": _tuned(n_neighbors=[15, 15], neighbor_pcs=[1, 3], n_random=50, metric="l2",
                         lam=0.00125, solver={"affine": True}, normalize=False, threshold=0.7),
    }


PRESETS = tuple(_presets())
"""The names `preset_params` takes."""


def preset_params(name):
    """The `KSSC` parameters of preset `name` (a new dict, with new solver objects).

    Parameters
    ----------
    name : str
        One of `PRESETS`: ``"generic"``, ``"paper"``, ``"faces"`` or ``"motion"``.

    Returns
    -------
    params : dict
        Keyword arguments for `KSSC`, every setting that decides the result.

    Examples
    --------
    >>> from kssc import KSSC
    >>> from kssc.presets import preset_params
    >>> model = KSSC(3, **preset_params("faces"))
    >>> model.n_neighbors
    30
    """
    presets = _presets()
    if name not in presets:
        raise ValueError(f"Unknown preset {name!r}; choose one of {list(presets)}.")
    return presets[name]
