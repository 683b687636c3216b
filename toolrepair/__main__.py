"""`python -m toolrepair` is the `toolrepair` command."""

import sys

from .cli import main

sys.exit(main())
