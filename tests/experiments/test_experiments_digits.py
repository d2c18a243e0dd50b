"""The digits experiment, declared by its config and module only: every method scores
above chance on scikit-learn's bundled digits, its scores agree with scikit-learn's
metrics, and the report and the claims pick it up without a line elsewhere."""


import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import adjusted_rand_score

from experiments import _runner, report
from experiments.digits import SCORES
from experiments.publish import feeds


@pytest.fixture(scope="module")
def smoke(tmp_path_factory, compose_config):
    results = tmp_path_factory.mktemp("digits")
    cfg = compose_config("experiment=digits", "profile=smoke", "n_jobs=1", results_dir=results)
    frame = _runner.run(cfg)
    return results, frame


@pytest.mark.e2e
def test_every_method_clusters_the_digits_well_above_chance(smoke):
    _, frame = smoke
    assert set(frame["method"]) == {"kssc", "ssc", "tsc", "spectral_knn", "kmeans"}
    assert not frame["failed"].any(), frame["failure"].tolist()
    assert (frame["accuracy_pct"] > 50).all()  # chance is about 10 %
    assert np.allclose(frame["accuracy_pct"], 100 - frame["error_pct"])
    assert frame["nmi"].between(0, 1).all() and (frame["ari"] > 0.3).all()
    assert (frame["n_samples"] == 300).all() and (frame["ambient_dim"] == 64).all()


def test_the_scores_are_scikit_learns():
    y = np.array([0, 0, 1, 1, 2, 2])
    labels = np.array([1, 1, 0, 2, 2, 2])
    assert SCORES["ari"](y, labels) == adjusted_rand_score(y, labels)


@pytest.mark.e2e
def test_summary_table_and_report_section(smoke):
    results, frame = smoke
    table = pd.read_csv(results / "digits_table.csv")
    kssc = table.set_index("method").loc["kssc"]
    assert kssc["accuracy_pct_mean"] == pytest.approx(frame.loc[frame["method"] == "kssc",
                                                                "accuracy_pct"].mean())
    declared = dict(feeds.declared())["digits"]
    text = "\n".join(report.section(results, "digits", declared))
    assert "Spectral (kNN graph)" in text and "k-means" in text
    assert text.count("- Claim:") == 1 and "not run" not in text
