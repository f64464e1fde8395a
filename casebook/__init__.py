"""casebook: the helpers behind the JAX Bug Casebook, and a check for your own optimizer.

For readers' own projects (``pip install "casebook @ git+<repository>"``):

* :mod:`casebook.check`: :func:`~casebook.check.check_optimizer` finds the book's families
  of optimizer bugs (``casebook/check/families.toml``) that it can see, before they crash;
* ``python3 -m casebook explain`` reads a traceback and prints the case that explains it,
  and ``%load_ext casebook`` adds that answer in one line under a matching traceback in
  IPython (:mod:`casebook.explain`).

For the book's pages (``casebook[cases]``), one folder per concern (CONTRIBUTING.md draws
the map): :mod:`casebook.releases` runs code on historical upstream releases and eras;
:mod:`casebook.trace` shows the mechanism in types and jaxprs; :mod:`casebook.bench` times
variants and asserts claims; :mod:`casebook.cases` is the registry, one folder per case;
:mod:`casebook.status` holds the status board, the page runs and what a page ran on.

``python3 -m casebook`` (:mod:`casebook.__main__`) dispatches the README's commands; it and
the set-up (:mod:`casebook.maintainer.tools.environment`) use only the standard library, so they run
before anything is installed. The maintainer's folders (``tools``, ``sync``, ``workshop``,
``corpus``) live in a clone only: the wheel holds what readers and pages import.
Submodules are imported explicitly, so ``import casebook`` stays free of jax.
"""

from importlib.metadata import PackageNotFoundError, version
from typing import Any

try:
    __version__ = version("casebook")
except PackageNotFoundError:  # run from a clone that was never installed
    __version__ = "0+unknown"

__all__ = ["__version__", "load_ipython_extension"]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext casebook``: one line under a traceback the book knows, pointing to its
    fix (:func:`casebook.explain.load_ipython_extension`)."""
    from casebook import explain as _explain

    _explain.load_ipython_extension(ipython)
