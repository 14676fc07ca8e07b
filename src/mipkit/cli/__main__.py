import sys

from mipkit.cli import main

sys.exit(main())
