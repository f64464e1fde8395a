"""``python -m casebook.sync``: what ``python3 -m casebook sync`` runs in the venv."""

import sys

from casebook.sync import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
