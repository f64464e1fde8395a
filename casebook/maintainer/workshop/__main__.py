"""``python -m casebook.maintainer.workshop``: :func:`casebook.maintainer.workshop.main`."""

import sys

from casebook.maintainer.workshop import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
