"""``python -m casebook.workshop``: :func:`casebook.workshop.main`."""

import sys

from casebook.workshop import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
