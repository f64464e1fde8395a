"""The ``%%on_release`` cell magic: run a cell on a release, show it, assert it.

In a notebook, ``%load_ext casebook.releases`` adds it::

    %%on_release optax==0.1.9 --raises TypeError --match found_nan
    opt = optax.MultiSteps(...)

The options are declared with IPython's ``magic_arguments``, so ``%%on_release?`` prints
them. :func:`on_release` is the magic itself and takes the namespace as an argument, so
tests call it without a running kernel. This module imports IPython; the package imports
it only when the extension is loaded or :func:`on_release` is used.

Examples:
    Called from Python, the magic takes its line, its cell and the namespace that gets
    the :class:`~casebook.releases.Outcome` (``--as``, default ``_release_outcome``):

    >>> namespace = {}
    >>> _ = on_release("current --ok --as answer", "result = 6 * 7", namespace)
    [ran on current: ...]
    result = 42
    >>> namespace["answer"].result
    42

    An expected exception is printed, shortened to its last frames, and asserted:

    >>> _ = on_release("current --raises ZeroDivisionError --match zero", "1 / 0", namespace)
    [ran on current: ...]
    Traceback (most recent call last, last frames only):
    ...
    ZeroDivisionError: division by zero
    >>> namespace["_release_outcome"].summary
    'ZeroDivisionError: division by zero'
"""

from __future__ import annotations

import functools
import shlex
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic_arguments import argument, magic_arguments

from casebook.releases._expect import expect
from casebook.releases._outcome import Outcome
from casebook.releases._runner import run
from casebook.releases._targets import PatchedRelease, Target

_VALUED = ("--raises", "--match", "--timeout", "--as")


def _attach_values(argv: list[str]) -> list[str]:
    """``["--match", "-x"]`` -> ``["--match=-x"]``: a value of an option is taken as it
    stands, even a regular expression that starts with ``-`` (which argparse alone would
    read as another option)."""
    out: list[str] = []
    it = iter(argv)
    for a in it:
        value = next(it, None) if a in _VALUED else None
        out.append(a if value is None else f"{a}={value}")
    return out


@magic_arguments(name="%on_release")  # printed as %%on_release: a cell magic
@argument(
    "target",
    nargs="?",
    help="a release spec (optax==0.1.9), 'current', or the name of a PatchedRelease variable",
)
@argument("--raises", metavar="EXC", help="assert that the cell raises EXC (or a subclass)")
@argument(
    "--match", metavar="REGEX", help="with --raises: assert that REGEX is found in the message"
)
@argument("--ok", action="store_true", help="assert that the cell runs cleanly")
@argument("--x64", action="store_true", help="run with JAX_ENABLE_X64=1")
@argument(
    "--timeout",
    metavar="S",
    type=float,
    default=120.0,
    help="kill the run after S seconds (default 120)",
)
@argument(
    "--as",
    dest="as_",
    metavar="NAME",
    default="_release_outcome",
    help="store the Outcome in this variable (default _release_outcome)",
)
def on_release(line: str, cell: str, user_ns: dict[str, Any] | None = None) -> Outcome:
    """Run the cell on a release in a fresh interpreter; print its output and (shortened)
    traceback; with ``--raises`` or ``--ok``, assert the outcome.

    For example, the trigger of case 1 on the release of its report::

        %%on_release optax==0.1.9 --raises TypeError --match "found_nan"
        import jax, jax.numpy as jnp, optax
        opt = optax.MultiSteps(optax.chain(optax.zero_nans(), optax.sgd(0.1)), 2)
        params = {"w": jnp.ones(3)}
        jax.jit(opt.update)(params, opt.init(params), params)
    """
    user_ns = {} if user_ns is None else user_ns
    parser = on_release.parser  # set by magic_arguments
    try:
        args, extra = parser.parse_known_args(_attach_values(shlex.split(line)))
    except UsageError as e:
        raise ValueError(f"%%on_release: {e}") from None
    unknown = [a for a in extra if a.startswith("-")]
    if unknown:
        raise ValueError(f"%%on_release: unknown option {unknown[0]}")
    if args.target is None or extra:
        raise ValueError("%%on_release needs exactly one target, e.g. optax==0.1.9")
    if args.ok and args.raises:
        raise ValueError("%%on_release: --ok and --raises exclude each other")
    target: Target = args.target
    if isinstance(user_ns.get(args.target), PatchedRelease):
        target = user_ns[args.target]
    outcome = run(cell, target, timeout=args.timeout, x64=args.x64)
    user_ns[args.as_] = outcome
    print(outcome.shown())
    if args.raises or args.ok:
        expect(outcome, raises=args.raises, match=args.match)
    return outcome


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext casebook.releases`` registers ``%%on_release`` (help: ``%%on_release?``)."""

    @functools.wraps(on_release)
    def magic(line: str, cell: str) -> None:
        on_release(line, cell, ipython.user_ns)

    ipython.register_magic_function(magic, magic_kind="cell", magic_name="on_release")
