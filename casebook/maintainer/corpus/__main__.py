"""``python -m casebook.maintainer.corpus`` (and ``python3 -m casebook test --corpus``): judge the check."""

import sys

from casebook.maintainer.corpus import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
