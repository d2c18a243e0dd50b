"""The paper's experiments: one module per paper artefact, run through `experiments/run.py`."""
