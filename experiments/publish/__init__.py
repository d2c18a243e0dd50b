"""The publishing wing: results CSVs -> tables, claims, figures -> README, REPORT.md, docs.

- `feeds`: the one reader of the `feeds:` sections of conf/experiment/*.yaml (and of
  `tables.yaml` here, the tables no experiment owns: provenance and the benchmarks);
- `tables`: a declared table spec turned into a DataFrame of formatted cells (the one
  interval formatter lives there);
- `markdown`: the one Markdown table renderer, and the filler of the marked blocks
  (`<!-- table: NAME -->` ... `<!-- /table -->`) with `--check`.

`experiments.report`, `experiments.readme`, `experiments.plot` and `experiments.claims`
are thin users of it. Nothing here imports an experiment module or recomputes a result.
"""
