"""``python -m spectrace.bench --worker SPEC.json --result RESULT.json``: how the bench starts
each configuration's worker process."""

import sys

from spectrace.bench.worker import main

sys.exit(main(sys.argv[1:]))
