import sys

from experiments._produce import traced_main

from .run import main

sys.exit(traced_main(main))
