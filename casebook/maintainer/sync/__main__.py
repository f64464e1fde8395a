"""``python -m casebook.maintainer.sync``: what ``python3 -m casebook sync`` runs in the venv."""

import sys

from casebook.maintainer.sync import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
