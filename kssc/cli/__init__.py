"""The `kssc` command: cluster the points of a file (`_main`), read by `_points` and
`_delimited`, written by `_output`; compile every kernel ahead of a first fit (`_compile`)."""

from ._main import METHODS, main

__all__ = ["METHODS", "main"]
