"""Where the book lives and what it runs on: the one ``ROOT`` and the one package list.

Standard library only, and importable on any Python 3: ``python3 -m casebook`` reads it
before anything is installed. Every module that needs the checkout's root or the names of
the libraries the book watches takes them from here, so neither is computed twice.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["BOOK_URL", "LIBRARIES", "PACKAGE", "PACKAGES", "REPORTED", "ROOT"]

BOOK_URL = "https://jax-bug-casebook.github.io/jax-bug-casebook/"
"""Where the book is published (``_config.yml``'s ``html.baseurl``; a test keeps them equal)."""

PACKAGE = Path(__file__).resolve().parent
"""The ``casebook`` package's own folder."""

ROOT = PACKAGE.parent
"""The folder that holds the package: the clone of the book, or ``site-packages``."""

PACKAGES = ("jax", "jaxlib", "optax", "equinox", "diffrax")
"""The distributions whose versions every record, board and run reports, in this order."""

LIBRARIES = tuple(p for p in PACKAGES if p != "jaxlib")
"""The libraries a reader imports (jaxlib comes with jax): the columns of the short tables."""

REPORTED = (*PACKAGES, "chex", "numpy")
"""What a release run reports it imported: the watched packages and the two that old
optax wheels bring along."""
