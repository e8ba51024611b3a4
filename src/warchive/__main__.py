"""`python -m warchive` runs the warchive command."""

import sys

from .cli import main

sys.exit(main())
