"""``python -m bench.suites``: see :mod:`bench.suites.runner`."""

import sys

from bench.suites.runner import main

sys.exit(main())
