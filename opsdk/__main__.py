"""`python -m opsdk` runs the `opsdk` command."""

import sys

from opsdk.console import main

sys.exit(main())
