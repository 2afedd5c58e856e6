"""`python -m d2s ...`: see `d2s.cli`."""
import sys

from .cli import main

sys.exit(main())
