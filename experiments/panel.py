"""The real-data selection panel: every preset of `KSSC` and the label-free automatic choice
on every data set reachable without a download at run time, and the default chosen by
leave-one-family-out.

Tasks (one per data draw; `experiment.trials` seeds each): Extended Yale B combinations of
n subjects within each of the four groups (`yale_grouped.subject_combinations`, capped) and
all 38 subjects; every `hopkins_every`-th Hopkins 155 sequence; TIR draws at a few noise
levels; scikit-learn's bundled real sets; synthetic unions of subspaces. Every preset
(`kssc.presets`) is fitted on the task's data with the trial's seed; each fit records its
error and time, each of AutoKSSC's candidates every label-free criterion of `kssc.auto`
(`candidate_criteria` on the candidates' fits, at `auto.subspace_dim`). Method
"auto_<criterion>" is `AutoKSSC(candidates, criterion=<criterion>, subspace_dim)` built from
the same fits (its time is the candidates' sum); "auto_<criterion>_d<dim>" the same at each
other dimension of `auto.subspace_dims`, for the criteria that depend on it (only the
criteria are recomputed).

Summary (`panel_table.csv`): per data set and setting, the mean error with its 95 %
bootstrap interval over the data set's tasks; then the leave-one-family-out rows ("loo"):
for each family (Yale B's subject counts are one), the setting with the lowest mean error
over the other families (mean per data set, then per family) is scored on the family's data
sets, with the best setting there and how far the chosen one trails it; every setting's mean
per family and over the families ("family_mean"); and AutoKSSC's criterion chosen the same
way among the automatic variants at `auto.subspace_dim` alone ("loo_criterion"), and the
(criterion, subspace_dim) pair chosen the same way among every automatic variant
("loo_criterion_dim"), each scored on the held-out family, with their mean over the families
(family "all").
"""

import time
import warnings

import numpy as np
import pandas as pd
from sklearn import datasets as sk_datasets

from kssc import KSSC
from kssc.auto import CRITERIA, SUBSPACE_CRITERIA, best_candidate, candidate_criteria
from kssc.datasets import (
    load_hopkins_sequence,
    make_subspaces,
    make_tir,
    tir_spectra,
    yaleb_subject_images,
)
from kssc.datasets.hopkins import list_hopkins_sequences
from kssc.datasets.yaleb import SUBJECTS
from kssc.metrics import clustering_error
from kssc.presets import PRESETS, preset_params

from ._bootstrap import bootstrap_mean
from ._trial import Experiment, data_seed, method_seed, warning_summary
from .yale_grouped import subject_combinations

SKLEARN = {"digits": sk_datasets.load_digits, "wine": sk_datasets.load_wine,
           "breast_cancer": sk_datasets.load_breast_cancer, "iris": sk_datasets.load_iris}


def auto_methods(exp):
    """{method: (criterion, subspace_dim)} of the automatic variants: "auto_<criterion>" at
    `auto.subspace_dim` first (so a tie in a choice keeps it), then "auto_<criterion>_d<dim>"
    at the other dimensions of `auto.subspace_dims`, in their order, for the criteria that
    depend on the dimension (`SUBSPACE_CRITERIA`)."""
    if "auto" not in exp:
        return {}
    default = int(exp["auto"]["subspace_dim"])
    methods = {"auto_" + name: (name, default) for name in CRITERIA}
    for dim in (int(d) for d in exp["auto"].get("subspace_dims", []) if int(d) != default):
        methods.update({f"auto_{name}_d{dim}": (name, dim) for name in SUBSPACE_CRITERIA})
    return methods


def tasks(exp, data_dir=None):
    cells = []
    yale = exp["yale"]
    for g, group in enumerate(yale["groups"], start=1):
        for n in yale["n_subjects"]:
            for combo in subject_combinations(group, int(n), yale["max_combinations"],
                                              yale["combination_seed"], g):
                cells.append({"family": "yale", "dataset": f"yale_{n}",
                              "source": "-".join(map(str, combo))})
    if yale["all_38"]:
        cells.append({"family": "yale", "dataset": "yale_38", "source": "all"})
    names = list_hopkins_sequences(subset="hopkins155", data_dir=data_dir)
    cells += [{"family": "hopkins155", "dataset": "hopkins155", "source": name}
              for name in names[::exp["hopkins_every"]]]
    cells += [{"family": "tir", "dataset": "tir", "source": f"noise={s}/draw={d}"}
              for s in exp["tir"]["noise"] for d in range(exp["tir"]["draws"])]
    cells += [{"family": name, "dataset": name, "source": "all"} for name in exp["sklearn"]]
    cells += [{"family": "synthetic", "dataset": "synthetic", "source": f"draw={d}"}
              for d in range(exp["synthetic"]["draws"])]
    return [(cell, t) for cell in cells for t in range(exp["trials"])]


def load_task(cell, exp, data_dir, seed):
    """(X, y) of one task (the draw of TIR and the synthetic unions seeded by `seed`)."""
    family, source = cell["family"], cell["source"]
    if family == "yale":
        numbers = SUBJECTS if source == "all" else [SUBJECTS[int(s) - 1]
                                                    for s in source.split("-")]
        blocks = [yaleb_subject_images(s, size=tuple(exp["yale"]["size"]), include_bad=False,
                                       n_per_subject=None, data_dir=data_dir) for s in numbers]
        return np.vstack(blocks), np.repeat(np.arange(len(blocks)), [len(b) for b in blocks])
    if family == "hopkins155":
        return load_hopkins_sequence(source, data_dir=data_dir)
    if family == "tir":
        spec = exp["tir"]
        noise = float(source.split("/")[0].split("=")[1])
        X, y, _ = make_tir(tir_spectra(data_dir), n_subspaces=spec["n_subspaces"],
                           n_spectra=spec["n_spectra"], n_per_subspace=spec["n_per_subspace"],
                           noise=noise, random_state=data_seed(seed))
        return X, y
    if family == "synthetic":
        spec = exp["synthetic"]
        X, y, _ = make_subspaces(spec["n_subspaces"], spec["subspace_dim"],
                                 spec["n_per_subspace"], spec["ambient_dim"],
                                 noise=spec["noise"], random_state=data_seed(seed))
        return X, y
    X, y = SKLEARN[family](return_X_y=True)
    return X.astype(np.float64), y


def _fit(name, X, y, seed):
    """One preset's row (error, time, the fit's warnings; NaN when the fit fails) and its
    (labels, affinity). A row warning of more graph components than clusters is one draw of
    an arbitrary split (docs/reproduction.md)."""
    row = {"method": name, "error_pct": np.nan, "failed": False, "failure": "",
           "time_fit_s": np.nan, "warnings": ""}
    start = time.perf_counter()
    try:
        model = KSSC(len(np.unique(y)), random_state=seed, **preset_params(name))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model.fit(X)
        row["warnings"] = warning_summary(caught)
        row["time_fit_s"] = time.perf_counter() - start
        row["time_representation_s"] = model.timings_["representation"]
        row["error_pct"] = clustering_error(y, model.labels_)
        return row, (model.labels_, model.affinity_matrix_)
    except Exception as exc:  # a failed fit is data: counted, reported
        row["time_fit_s"] = time.perf_counter() - start
        row["failed"] = True
        row["failure"] = f"{type(exc).__name__}: {exc}"[:300]
        return row, None


def trial(context, cell, trial, seed):
    exp = context["experiment"]
    X, y = load_task(cell, exp, context["data_dir"], seed)
    auto = exp["auto"]
    fitted = [_fit(name, X, y, method_seed(seed)) for name in exp["presets"]]
    rows = [row for row, _ in fitted]
    fits = {row["method"]: fit for row, fit in fitted if fit is not None}
    candidates = {name: fits[name] for name in auto["candidates"] if name in fits}
    # The criteria as AutoKSSC computes them on the same fits (its candidates, same seed),
    # once per criterion dimension; every candidate failed: no automatic row.
    autos = auto_methods(exp)
    dims = sorted({dim for _, dim in autos.values()})
    criteria = candidate_criteria(X, candidates, dims, method_seed(seed)) if candidates else {}
    default = int(auto["subspace_dim"])
    for row in rows:
        row.update(criteria.get(default, {}).get(row["method"], {}))
    by_name = {row["method"]: row for row in rows}
    spent = sum(by_name[name]["time_fit_s"] for name in candidates)
    for method, (criterion, dim) in (autos if criteria else {}).items():
        chosen = best_candidate(criteria[dim], criterion)
        rows.append({**by_name[chosen], **criteria[dim][chosen], "method": method,
                     "chosen": chosen, "criterion": criterion, "subspace_dim": dim,
                     "time_fit_s": spent})
    for row in rows:
        row.update(n_samples=len(y), ambient_dim=X.shape[1], n_clusters=len(np.unique(y)))
    return rows


def check(exp):
    unknown = [name for name in [*exp["presets"], *exp["auto"]["candidates"]]
               if name not in PRESETS]
    if unknown:
        raise ValueError(f"experiment presets {unknown} are not in kssc.presets.PRESETS "
                         f"{list(PRESETS)}.")
    if not set(exp["auto"]["candidates"]) <= set(exp["presets"]):
        raise ValueError("experiment.auto.candidates must be among experiment.presets "
                         "(the automatic choice reuses their fits).")
    if int(exp["auto"]["subspace_dim"]) < 1 or any(int(d) < 1 for d in
                                                    exp["auto"].get("subspace_dims", [])):
        raise ValueError("experiment.auto.subspace_dim and subspace_dims must be >= 1.")
    if not set(exp["sklearn"]) <= set(SKLEARN):
        raise ValueError(f"experiment.sklearn {exp['sklearn']} must be among {list(SKLEARN)}.")


def per_dataset(frame):
    """Mean error per (family, dataset, method), a failed fit scoring 100 %."""
    scored = frame.assign(error_pct=frame["error_pct"].fillna(100.0))
    return scored.groupby(["family", "dataset", "method"], sort=False)["error_pct"].mean()


def leave_one_family_out(frame, settings):
    """{family: (chosen setting, {setting: mean error over the other families})}."""
    means = per_dataset(frame)
    by_family = means.groupby(level=["family", "method"], sort=False).mean()
    out = {}
    for family in frame["family"].unique():
        rest = by_family.drop(index=family, level="family")
        score = rest.groupby(level="method").mean().reindex(settings)
        out[family] = (score.idxmin(), score.to_dict())
    return out


def summary(frame, exp):
    autos = auto_methods(exp)
    default_autos = [m for m, (_, dim) in autos.items()
                     if dim == int(exp["auto"]["subspace_dim"])] if autos else []
    # The default setting is chosen among the presets and the automatic variants at
    # auto.subspace_dim; the other dimensions enter the (criterion, dimension) choice only.
    settings = [*exp["presets"], *default_autos]
    frame = frame.assign(error_pct=frame["error_pct"].where(~frame["failed"], 100.0))
    means = per_dataset(frame)
    rows = []
    for (family, dataset, method), part in frame.groupby(["family", "dataset", "method"],
                                                         sort=False):
        interval = bootstrap_mean(part["error_pct"].to_numpy())
        chosen = part["chosen"].dropna().value_counts() if "chosen" in part else pd.Series()
        rows.append({"scope": "setting", "family": family, "dataset": dataset,
                     "method": method, "chosen": ", ".join(f"{k} x{v}" for k, v in
                                                           chosen.items()),
                     "n_tasks": len(part), "n_failed": int(part["failed"].sum()),
                     "error_pct_mean": interval["mean"], "error_pct_ci_low": interval["low"],
                     "error_pct_ci_high": interval["high"],
                     "time_fit_s_mean": part["time_fit_s"].mean()})
    for family, (chosen, scores) in leave_one_family_out(frame, settings).items():
        for dataset in frame.loc[frame["family"] == family, "dataset"].unique():
            here = means.loc[(family, dataset)].reindex(settings)
            part = frame[(frame["dataset"] == dataset) & (frame["method"] == chosen)]
            interval = bootstrap_mean(part["error_pct"].to_numpy())
            rows.append({"scope": "loo", "family": family, "dataset": dataset,
                         "method": "loo_default", "chosen": chosen,
                         "n_tasks": len(part), "n_failed": int(part["failed"].sum()),
                         "error_pct_mean": interval["mean"], "error_pct_ci_low": interval["low"],
                         "error_pct_ci_high": interval["high"], "best_method": here.idxmin(),
                         "trails_best_pct": interval["mean"] - here.min(),
                         "selection_error_pct": scores[chosen],
                         "time_fit_s_mean": part["time_fit_s"].mean()})
    # Family means by criterion, then dimension: the grid of docs/presets.md's panel_dims.
    by_criterion = sorted(autos, key=lambda m: (list(CRITERIA).index(autos[m][0]), autos[m][1]))
    rows += _family_means(means, [*exp["presets"], *by_criterion], autos)
    present = set(frame["method"])
    rows += _held_out_choice(frame, means, [m for m in default_autos if m in present],
                             "loo_criterion", autos)
    rows += _held_out_choice(frame, means, [m for m in autos if m in present],
                             "loo_criterion_dim", autos)
    return pd.DataFrame(rows)


def _held_out_choice(frame, means, methods, scope, autos):
    """Rows `scope`: per family, the automatic variant among `methods` with the lowest mean
    error over the other families (`leave_one_family_out`), its criterion and dimension and
    its mean error on the family; then family "all", the mean of those held-out errors."""
    if not methods:
        return []
    by_family = means.groupby(level=["family", "method"]).mean()
    rows = [{"scope": scope, "family": family, "dataset": family, "method": scope,
             "chosen": chosen, "criterion": autos[chosen][0], "subspace_dim": autos[chosen][1],
             "error_pct_mean": by_family.loc[(family, chosen)],
             "selection_error_pct": scores[chosen]}
            for family, (chosen, scores) in leave_one_family_out(frame, methods).items()]
    return rows + [{"scope": scope, "family": "all", "dataset": "all", "method": scope,
                    "error_pct_mean": float(np.mean([r["error_pct_mean"] for r in rows]))}]


def _family_means(means, settings, autos):
    """Rows "family_mean": each setting's mean error per family (over its data sets), and
    over the families ("all"), in `settings` order; an automatic variant's with its
    criterion and dimension."""
    by_family = means.groupby(level=["family", "method"], sort=False).mean()
    overall = by_family.groupby(level="method", sort=False).mean()
    families = by_family.index.unique(level="family")
    values = [((family, method), by_family[(family, method)]) for family in families
              for method in settings if (family, method) in by_family.index]
    values += [(("all", method), overall[method]) for method in settings if method in overall]
    return [{"scope": "family_mean", "family": family, "dataset": family, "method": method,
             "error_pct_mean": value,
             **(dict(zip(("criterion", "subspace_dim"), autos[method], strict=True))
                if method in autos else {})}
            for (family, method), value in values]


# preflight=False: the trials fit KSSC directly, not through `_trial.fit_method`, so the
# runner's probe would run every trial in full, serially, before the parallel run.
EXPERIMENT = Experiment(tasks=tasks, trial=trial, summary=summary, check=check,
                        preflight=False)
