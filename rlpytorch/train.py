"""The training command line: ``python -m rlpytorch.train [--help]``.

A script, not a library module: the run is assembled in ``rlpytorch.training``,
whose function ``train`` is what Python calls (``rlpytorch.train(config)``);
importing this module would shadow that function's name in the package.
"""

import sys

from rlpytorch.run.launcher_watch import watch_launcher
from rlpytorch.training import INTERRUPTED, PROG, command_line, main

if __name__ == "__main__":
    watch_launcher()
    sys.exit(INTERRUPTED if command_line(main, PROG).summary.interrupted else 0)
