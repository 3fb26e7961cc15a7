"""`python -m parity_tools`, the same as the `parity` command."""

import sys

from parity_tools.cli import main

sys.exit(main())
