"""`bench/scheduling/run.py`: the same as `python -m bench.scheduling`, from a path."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.scheduling import main

sys.exit(main())
