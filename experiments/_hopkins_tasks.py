"""What the Hopkins 155 experiments share: their tasks, one per (sequence, trial)."""

from kssc.datasets import list_hopkins_sequences


def sequence_tasks(exp, data_dir=None):
    """`experiment.sequences` (all 155 when null) x `experiment.trials`."""
    names = exp.get("sequences")
    names = list(names) if names is not None else list_hopkins_sequences(subset="hopkins155")
    return [({"sequence": name}, t) for t in range(exp["trials"]) for name in names]
