"""`python -m cb_async` does what the `cb-async` command does."""

import sys

from cb_async.cli import main

sys.exit(main())
