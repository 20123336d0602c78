"""`python -m sear` is the same as the `sear` command."""

import sys

from sear.cli import main

sys.exit(main())
