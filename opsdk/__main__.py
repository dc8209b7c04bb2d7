"""`python -m opsdk` runs the `opsdk` command."""

import sys

from opsdk.cli import console

sys.exit(console())
