"""``python -m kssc``: the command line of `kssc.cli`."""

from .cli import main

raise SystemExit(main())
