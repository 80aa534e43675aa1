"""`python -m loopwright`: the same as the `loopwright` command."""

import sys

from .cli import main

sys.exit(main())
