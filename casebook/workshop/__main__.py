"""``python -m casebook.workshop``: :func:`casebook.workshop.main`."""

import sys

from casebook.workshop import main

sys.exit(main(sys.argv[1:]))
