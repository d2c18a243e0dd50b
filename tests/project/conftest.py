"""Fixtures of the project's tests (docs, commands, packaging)."""

import argparse
import runpy
import warnings

import pytest


class _Captured(Exception):
    def __init__(self, parser):
        self.parser = parser


def _capture_parser(module):
    """Run `python -m module` until it parses its arguments: the argparse parser it built."""

    def capture(self, *args, **kwargs):
        raise _Captured(self)

    with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # runpy: the package imported it first
        patch.setattr(argparse.ArgumentParser, "parse_args", capture)
        try:
            runpy.run_module(module, run_name="__main__", alter_sys=False)
        except _Captured as captured:
            return captured.parser
    raise AssertionError(f"python -m {module} parses no arguments with argparse")


@pytest.fixture(scope="session")
def parser_of():
    """`parser_of(module)`: the argparse parser `python -m module` builds (run until its
    parse_args, which is stopped), built once per module."""
    parsers = {}

    def parser(module):
        if module not in parsers:
            parsers[module] = _capture_parser(module)
        return parsers[module]

    return parser
