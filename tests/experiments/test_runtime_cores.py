"""runtime_cores keeps, per (method, cores), the fit with the median time to build Z."""

import numpy as np

from experiments.runtime_cores import median_fit


def test_median_fit_is_the_middle_time_and_a_failed_fit_sorts_last():
    fits = [{"method": "kssc", "time_representation_s": t, "time_fit_s": t + 1.0, "id": i}
            for i, t in enumerate([0.3, 0.1, 0.2, 0.5])]
    fits.append({"method": "kssc", "time_representation_s": np.nan, "time_fit_s": np.nan,
                 "id": 4})
    assert median_fit(fits)["id"] == 0  # times 0.1, 0.2, 0.3, 0.5, failed: the third
    assert median_fit(fits[:4])["id"] == 2  # an even number: the lower middle one
    # SSSC is timed whole (the paper's convention): its fit time decides.
    whole = [{"method": "sssc", "time_representation_s": 0.0, "time_fit_s": t, "id": i}
             for i, t in enumerate([3.0, 1.0, 2.0])]
    assert median_fit(whole)["id"] == 2
