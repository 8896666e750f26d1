"""`python -m bench.scheduling`."""

import sys

from bench.scheduling import main

sys.exit(main())
