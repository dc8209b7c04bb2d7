"""`python -m opsdk` runs the `opsdk` command."""

import sys

from opsdk.cli import main

sys.exit(main())
