"""casebook: the helpers behind the JAX Bug Casebook, and a check for your own optimizer.

For readers' own projects (``pip install "casebook @ git+<repository>"``):

* :mod:`casebook.check`: :func:`~casebook.check.check_optimizer` finds the book's three
  families of optimizer bugs (state drift, non-array leaves, callable data) before they crash.

For the book's pages (``casebook[cases]``):

* :mod:`casebook.releases` runs code on historical upstream releases in a subprocess, and
  the ``%%on_release`` magic;
* :mod:`casebook.trace` cuts jaxprs and reports dtype / weak-type / structure drift;
* :mod:`casebook.bench` times variants interleaved in one process;
* :mod:`casebook.bench.records` and :mod:`casebook.status.runs` store benchmark figures and page runs
  per device, as data the pages show;
* :mod:`casebook.status.stack` states the versions a page ran on;
* :mod:`casebook.status.board` is the status board's set of triggers.

``python3 -m casebook`` (:mod:`casebook.__main__`, with :mod:`casebook.tools.environment`,
:mod:`casebook.tools.buildcache`, :mod:`casebook.tools.colab`, :mod:`casebook.tools.colabsim` and
:mod:`casebook.status.latest`) is the set-up and the commands of the README; those modules use
only the standard library, so they run before anything is installed. Submodules are
imported explicitly, so ``import casebook`` stays free of jax.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("casebook")
except PackageNotFoundError:  # run from a clone that was never installed
    __version__ = "0+unknown"

__all__ = [
    "__version__",
    "bench",
    "board",
    "check",
    "records",
    "releases",
    "runs",
    "stack",
    "trace",
]
