"""What a run sends back, and how it shows itself.

An :class:`Outcome` is the record of one run of code on a release (made by
:func:`casebook.releases.run`): whether it raised, what, where, what it printed and which
files of which packages it imported. It formats itself for a page: :meth:`Outcome.shown`
is what the ``%%on_release`` magic prints (the banner, the output and the last frames of
the traceback, with this machine's directories replaced by ``<cache>`` and
``<site-packages>``).
"""

from __future__ import annotations

import dataclasses
import sysconfig
from typing import Any

from casebook.display import PlainText
from casebook.failure import Failure
from casebook.project import LIBRARIES


@dataclasses.dataclass(repr=False)
class Outcome(PlainText):
    """What happened when code ran on a release.

    Made by :func:`run` (and, one per variant, by :func:`run_program`); asserted by
    :func:`expect`. It prints as ``[target] OK`` or ``[target] TypeError: ...``.

    Args:
        target: the release's label (``"optax==0.1.9"``, ``"current"``).
        package: the release's package (None for ``current`` and eras).
        ok: whether the code ran without an exception.
        exc_type: the exception's class name, or None.
        exc_types: the names of its classes, most derived first.
        message: the exception's message.
        traceback: the child's formatted traceback.
        stdout: what the code printed.
        stderr: what the child wrote to stderr.
        versions: ``{package: {"version": ..., "file": ...}}`` of what it imported.
        result: the code's ``result`` variable (JSON), or None.
        seconds: wall time of the run (from the request to the outcome).
        frames: ``[file, lineno, function, source]`` of each frame of the exception.
        code: the code that ran, to run it again elsewhere.

    Examples:
        >>> from casebook.releases import run
        >>> outcome = run("import json; json.loads('{')")
        >>> outcome.ok, outcome.exc_type, outcome.failure.is_a(ValueError)
        (False, 'JSONDecodeError', True)
        >>> outcome.summary
        'JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)'
    """

    target: str
    package: str | None
    ok: bool
    exc_type: str | None
    exc_types: list[str]
    message: str
    traceback: str
    stdout: str
    stderr: str
    versions: dict[str, dict[str, str]]
    result: Any
    seconds: float
    """Wall time of the run, from the request to the outcome (for a cold run, the whole
    subprocess, interpreter start-up and imports included)."""
    frames: list[list[Any]] = dataclasses.field(default_factory=list)
    """``[file, lineno, function, source]`` of each frame of the exception, outermost first."""
    code: str = ""
    """The code that ran (dedented), so a page can run the same code on another target:
    ``releases.run(outcome.code, "optax==0.2.4")``."""
    cache: str = ""
    """The release cache the run's files came from ("" for the current stack), which
    ``portable`` shows as ``<cache>``."""

    @property
    def failure(self) -> Failure | None:
        """The exception as a :class:`~casebook.failure.Failure`, None if the code ran
        cleanly."""
        if self.ok:
            return None
        return Failure.from_record(self.exc_type or "?", self.exc_types, self.message, self.frames)

    @property
    def summary(self) -> str:
        """``OK`` or ``TypeError: <first line of the message>``."""
        failure = self.failure
        return "OK" if failure is None else failure.first_line

    def version(self, package: str) -> str:
        """The version of ``package`` the code imported, ``?`` if it did not."""
        return self.versions.get(package, {}).get("version", "?")

    @property
    def imported(self) -> str:
        """The case-relevant versions actually imported, e.g. ``jax 0.10.2, optax 0.1.9``."""
        return ", ".join(
            f"{k} {self.versions[k]['version']}" for k in LIBRARIES if k in self.versions
        )

    def __str__(self) -> str:
        return f"[{self.target}] {self.summary}"

    def shown(self, *, frames: int = 2) -> str:
        """What a page prints for the run: ``[ran on TARGET: VERSIONS; S s]``, the code's
        output, its ``result`` where it set one (the value the prose quotes), and the last
        ``frames`` frames of its traceback (none if it ran cleanly), with this machine's
        directories made portable (``portable``)."""
        lines = [f"[ran on {self.target}: {self.imported}; {self.seconds:.1f} s]"]
        if self.stdout:
            lines.append(self.stdout.rstrip("\n"))
        if self.ok and self.result is not None:
            lines.append(f"result = {self.result!r}")
        if not self.ok:
            lines.append(portable(short_traceback(self, frames), self.cache))
        return "\n".join(lines)


def short_traceback(outcome: Outcome, frames: int = 2) -> str:
    """The last frames of the child's traceback plus the full message, for display."""
    tb = outcome.traceback.rstrip().splitlines()
    try:
        start = max(i for i, line in enumerate(tb) if line.startswith("Traceback"))
    except ValueError:
        return outcome.traceback
    body = tb[start + 1 :]
    frame_starts = [i for i, line in enumerate(body) if line.startswith("  File ")]
    msg_start = next(
        (
            i
            for i, line in enumerate(body)
            if line.startswith(f"{outcome.exc_type}") and not line.startswith("  ")
        ),
        len(body),
    )
    keep = frame_starts[-frames:] if frame_starts else [0]
    shown = body[keep[0] : msg_start] if keep[0] < msg_start else []
    prefix = ["Traceback (most recent call last, last frames only):"]
    if len(frame_starts) > frames:
        prefix.append(f"  ... {len(frame_starts) - frames} earlier frame(s) ...")
    return "\n".join(prefix + shown + body[msg_start:])


def portable(text: str, cache: str = "") -> str:
    """Display form of output that names files: this machine's cache and environment
    directories become ``<cache>`` and ``<site-packages>``, so pages read the same
    wherever the book was built."""
    if cache:
        text = text.replace(cache, "<cache>")
    return text.replace(sysconfig.get_paths()["purelib"], "<site-packages>")
