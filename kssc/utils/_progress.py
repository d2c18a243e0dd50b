"""Progress of `verbose` fits on stderr: a line per stage, and chunk progress within a stage.

The chunk progress is a tqdm bar when tqdm is installed; the core library does not depend on
it and prints plain lines instead (about one per tenth of the stage).
"""

import sys
from contextlib import contextmanager
from time import perf_counter

try:
    from tqdm.auto import tqdm
except ImportError:
    tqdm = None

_PLAIN_STEPS = 10


def _silent(done, total):
    """The progress callback of a quiet fit."""


class _StageProgress:
    """Callback `(done, total)` reporting the chunks of one stage."""

    def __init__(self, label):
        self.label = label
        self.bar = None
        self.reported = 0

    def __call__(self, done, total):
        if tqdm is not None:
            if self.bar is None:
                self.bar = tqdm(total=total, desc=self.label, unit="chunk", file=sys.stderr)
            self.bar.update(done - self.bar.n)
            return
        step = done * _PLAIN_STEPS // total
        if step > self.reported or done == total:
            self.reported = step
            print(f"{self.label}: {done}/{total} chunks", file=sys.stderr, flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()


class ProgressMixin:
    """Adds `_stage`, reporting the stages of `fit` when the estimator's `verbose` is set."""

    @contextmanager
    def _stage(self, name):
        """Context of one stage of a fit; yields a callback `(done, total)` for its chunks.

        Prints the stage's name when it starts and its duration when it ends.
        """
        if not self.verbose:
            yield _silent
            return
        label = f"[{type(self).__name__}] {name}"
        print(f"{label} ...", file=sys.stderr, flush=True)
        progress = _StageProgress(label)
        start = perf_counter()
        try:
            yield progress
        finally:
            progress.close()
        print(f"{label}: done in {perf_counter() - start:.2f} s", file=sys.stderr, flush=True)
