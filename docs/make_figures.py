"""The user guide's pictures and small tables, from real runs (`make docs-figures`).

Writes into docs/_static/guide/:
- digits.png: k-SSC with its defaults and n_clusters=None on scikit-learn's digits, drawn by
  every `kssc.plot` function;
- yale_presets.png: the affinity of three Extended Yale B subjects under the generic and
  the faces preset, sorted by subject (needs the data: $KSSC_DATA_DIR);
- preprocessing.csv: digits' error with the data as given, with unit-norm rows and after
  StandardScaler (5 seeds each);
- predict.csv: the held-out error of `KSSC.predict` against refitting, read from
  results/predict_table.csv (the `predict` experiment).

Run from the repository root: ``python docs/make_figures.py`` (seconds for digits, about a
minute for Yale B).
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.datasets import load_digits
from sklearn.preprocessing import StandardScaler, normalize

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kssc import KSSC, clustering_error, plot  # noqa: E402
from kssc.datasets import load_yaleb  # noqa: E402
from kssc.presets import preset_params  # noqa: E402

OUT = ROOT / "docs" / "_static" / "guide"
DPI = 72


def digits_figure():
    X, y = load_digits(return_X_y=True)
    model = KSSC(random_state=0).fit(X)
    fig, axes = plt.subplots(2, 3, figsize=(12, 7.5))
    plot.affinity(model, y, ax=axes[0, 0])
    axes[0, 0].set_title("Affinity sorted by true digit")
    plot.embedding(model, ax=axes[0, 1])
    plot.eigengap(model, ax=axes[0, 2])
    plot.cluster_sizes(model, ax=axes[1, 0])
    plot.residuals(model, ax=axes[1, 1])
    plot.affinity(model, ax=axes[1, 2])
    error = clustering_error(y, model.labels_)
    axes[1, 2].set_title(f"Sorted by found cluster (error {error:.1f} %)")
    fig.suptitle(f"digits, KSSC() with n_clusters=None: {model.n_clusters_} clusters found")
    fig.tight_layout()
    fig.savefig(OUT / "digits.png", dpi=DPI)
    plt.close(fig)


def yale_figure(subjects=(1, 2, 3)):
    X, y = load_yaleb(list(subjects), size=(48, 42), include_bad=False, n_per_subject=None)
    fig, axes = plt.subplots(1, 2, figsize=(9, 4.5))
    for ax, preset in zip(axes, ("generic", "faces"), strict=True):
        model = KSSC(len(subjects), random_state=0, **preset_params(preset)).fit(X)
        plot.affinity(model, y, ax=ax)
        ax.set_title(f"preset {preset!r}: error {clustering_error(y, model.labels_):.1f} %")
    fig.suptitle(f"Extended Yale B, subjects {list(subjects)}, sorted by subject")
    fig.tight_layout()
    fig.savefig(OUT / "yale_presets.png", dpi=DPI)
    plt.close(fig)


def preprocessing_table(seeds=range(5)):
    X, y = load_digits(return_X_y=True)
    variants = {"as given": X, "unit-norm rows (normalize)": normalize(X),
                "StandardScaler": StandardScaler().fit_transform(X)}
    rows = []
    for name, data in variants.items():
        errors = [clustering_error(y, KSSC(10, random_state=s).fit(data).labels_) for s in seeds]
        rows.append({"digits data": name, "error % (mean of 5 seeds)": round(np.mean(errors), 1)})
    pd.DataFrame(rows).to_csv(OUT / "preprocessing.csv", index=False)


def predict_table(source=ROOT / "results" / "predict_table.csv", out=OUT):
    table = pd.read_csv(source)
    wide = table.pivot_table(index="dataset", columns="protocol",
                             values=["error_pct_mean", "heldout_error_pct_mean"])
    wide = wide.reindex(table["dataset"].drop_duplicates())
    rows = pd.DataFrame({
        "data": wide.index,
        "trials": table.groupby("dataset")["n_trials"].first().reindex(wide.index).to_numpy(),
        "refit: error %": wide[("error_pct_mean", "refit")].round(2).to_numpy(),
        "predict: error %": wide[("error_pct_mean", "predict")].round(2).to_numpy(),
        "refit: held-out error %": wide[("heldout_error_pct_mean", "refit")].round(2).to_numpy(),
        "predict: held-out error %": wide[("heldout_error_pct_mean", "predict")].round(2)
        .to_numpy(),
    })
    rows.to_csv(out / "predict.csv", index=False)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    digits_figure()
    preprocessing_table()
    predict_table()
    yale_figure()


if __name__ == "__main__":
    main()
