"""The publishing wing: results CSVs -> tables, claims, figures -> README, REPORT.md, docs.

- `feeds`: the one reader of the `feeds:` sections of conf/experiment/*.yaml (and of
  `tables.yaml` here, the tables no experiment owns: provenance and the benchmarks);
- `tables`: a declared table spec turned into a DataFrame of formatted cells (the one
  interval formatter, `experiments._format`, sits below this wing and `claims`);
- `markdown`: the one Markdown table renderer, and the filler of the marked blocks
  (`<!-- table: NAME -->` ... `<!-- /table -->`) with `--check`;
- `crosscheck_section`, `faces`, `reconcile`: REPORT.md's cross-check section, the face
  table's verdict and the reconciliation's steps, read from results/crosscheck*.csv (the
  cross-check's own `--docs` writers render docs/crosscheck.md through them too).

`experiments.report`, `experiments.readme` and `experiments.plot` are thin users of it;
`faces` and `reconcile` read `experiments.claims`' floors. Nothing here imports an
experiment module or recomputes a result.
"""
