"""The experiments: a config (conf/experiment/) and a module per experiment, run through
`python -m experiments.run` or `python -m experiments.suite`; figures and the report from CSVs
only."""
