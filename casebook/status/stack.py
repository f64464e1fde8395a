"""The stack a page ran on, computed and compared with the lock.

Pages do not assert version strings: they assert behaviour, and print the versions they
ran on with :func:`ran_on`, so the same notebooks run on the lock, on a GPU machine's own
jax, in Colab, and on the newest releases (``casebook test --latest``). The lock is
checked once, by ``tests/test_environment.py``. Where a page says which releases "today"
means, it compares what it ran on with the lock's own pins, ``ran_on().locked`` (read from
``requirements.txt`` by ``casebook.lock.locked_versions``), where the kernel runs the
lock (``ran_on().on_lock``), and never with a version written in the page: the lock moves,
and no page needs an edit (``tests/test_lock_bump.py``).
"""

from __future__ import annotations

import html
import platform
from dataclasses import dataclass, field

from casebook import lock, releases
from casebook.bench import records
from casebook.display import PlainText
from casebook.project import PACKAGES

__all__ = ["Stack", "ran_on"]

#: The packages whose versions every page states.


@dataclass(frozen=True, repr=False)
class Stack(PlainText):
    """What a page ran on: Python, the packages' versions, the device, and the lock's view.

    Made by :func:`ran_on`. It prints as one sentence and shows as one paragraph in HTML.

    Args:
        python: the Python version, ``"3.13.0"``.
        versions: ``{package: version}`` of the packages installed.
        device: what jax runs on, in words.
        locked: ``{package: version}`` pinned by ``requirements.txt`` (empty when no lock
            is at hand).
        locked_on: the date of the lock.

    Examples:
        >>> stack = Stack("3.13.0", {"jax": "0.12.0.1"}, "cpu", locked={"jax": "0.10.2"})
        >>> stack.off_lock
        {'jax': ('0.12.0.1', '0.10.2')}
        >>> print(stack)
        Ran on Python 3.13.0, jax 0.12.0.1; cpu. Differs from the lock: jax 0.12.0.1 (locked 0.10.2).
    """

    python: str
    versions: dict[str, str]
    device: str
    locked: dict[str, str] = field(default_factory=dict)
    locked_on: str = ""

    @property
    def on_lock(self) -> bool:
        """Whether this is the lock's stack, with a lock at hand and every package at its pin.
        A page asserts the versions its card names only then; on a GPU image's own jax or
        in Colab it asserts the behaviour alone."""
        return bool(self.locked) and not self.off_lock

    @property
    def off_lock(self) -> dict[str, tuple[str, str]]:
        """``{name: (installed, locked)}`` for each package that differs from the lock."""
        return {
            n: (v, self.locked[n])
            for n, v in self.versions.items()
            if n in self.locked and self.locked[n] != v
        }

    def _lock_note(self) -> str:
        if not self.locked:
            return "no lock at hand (casebook installed as a package)"
        if self.off_lock:
            return "differs from the lock: " + ", ".join(
                f"{n} {got} (locked {want})" for n, (got, want) in self.off_lock.items()
            )
        return f"the versions of requirements.txt, locked {self.locked_on or 'on an unknown date'}"

    def __str__(self) -> str:
        packages = ", ".join(f"{n} {v}" for n, v in self.versions.items())
        note = self._lock_note()
        return (
            f"Ran on Python {self.python}, {packages}; {self.device}. {note[0].upper()}{note[1:]}."
        )

    def _repr_html_(self) -> str:
        return f'<p class="casebook-stack">{html.escape(str(self))}</p>'


def ran_on(*extra: str) -> Stack:
    """The stack this kernel runs: the book's packages (those installed) plus ``extra``.

    Pages print it instead of asserting versions, so the same page runs on the lock, on
    a GPU machine, in Colab and on the newest releases.

    Args:
        *extra: more package names whose versions to state.

    Returns:
        The :class:`Stack`: Python, the versions of jax, jaxlib, optax, equinox and
        diffrax (and ``extra``), the device, and how they compare with the lock when
        the package runs from a checkout.

    Examples:
        >>> print(ran_on())
        Ran on Python 3..., jax ...
    """
    from casebook.bench import device_label

    versions = records.versions((*PACKAGES, *extra))
    locked = lock.locked_versions(tuple(versions)) if releases.running_from_checkout() else {}
    return Stack(
        python=platform.python_version(),
        versions=versions,
        device=device_label(),
        locked=locked,
        locked_on=lock.locked_on() if locked else "",
    )
