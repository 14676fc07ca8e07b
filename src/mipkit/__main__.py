"""``python -m mipkit`` runs the command line, like the ``mipkit`` script."""

import sys

from mipkit.cli import main

sys.exit(main())
