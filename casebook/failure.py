"""One summary of an exception, wherever it was raised: :class:`Failure`.

The pages ask the same three questions of every error: what type is it (and is it a
subclass of the one the book names), what does its first line say, and where was it
raised (the innermost frame, or the last frame inside a given package). A live exception
in the kernel (:meth:`Failure.of`, :func:`capture`) and an exception recorded by a child
process on an old release (:attr:`casebook.releases.Outcome.failure`) answer them the
same way, so a notebook never parses a traceback by hand.

Standard library only.

>>> failure = capture(int, "x")
>>> failure.first_line
"ValueError: invalid literal for int() with base 10: 'x'"
>>> failure.is_a(ValueError), failure.is_a("Exception"), failure.is_a(TypeError)
(True, True, False)
>>> capture(int, "1") is None
True
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from casebook.display import PlainText

__all__ = ["Failure", "Frame", "capture"]


@dataclass(frozen=True)
class Frame:
    """One frame of a traceback: file path, line number, function, source line."""

    file: str
    lineno: int
    function: str
    source: str = ""

    @property
    def where(self) -> str:
        """``file.py:function``, the file's name without its directory.

        >>> Frame("/x/optax/_src/wrappers.py", 12, "update", "...").where
        'wrappers.py:update'
        """
        return f"{PurePath(self.file).name}:{self.function}"

    def within(self, package: str) -> bool:
        """Whether the frame's file lies inside a directory named ``package``.

        >>> Frame("/x/optax/_src/wrappers.py", 12, "update").within("optax")
        True
        """
        return package in PurePath(self.file).parts[:-1]

    def relative_to(self, package: str) -> str:
        """``schedules/_inject.py:__call__``: the file's path below ``package/`` (and
        below its ``_src/``), then the function.

        >>> Frame("/x/optax/_src/transforms/_masking.py", 3, "init_fn").relative_to("optax")
        'transforms/_masking.py:init_fn'
        """
        parts = PurePath(self.file).parts
        if package not in parts[:-1]:
            return self.where
        below = list(parts[len(parts) - parts[::-1].index(package) :])
        if below and below[0] == "_src":
            below = below[1:]
        return f"{'/'.join(below)}:{self.function}"


@dataclass(frozen=True)
class Failure(PlainText):
    """An exception, summarised: its type and its classes' names, its message, and its
    frames (outermost first, as a traceback prints them)."""

    exc_type: str
    exc_types: tuple[str, ...]
    message: str
    frames: tuple[Frame, ...] = ()

    @classmethod
    def of(cls, error: BaseException) -> Failure:
        """The summary of a live exception."""
        frames = tuple(
            Frame(f.filename, f.lineno or 0, f.name, (f.line or "").strip())
            for f in traceback.extract_tb(error.__traceback__)
        )
        return cls(
            type(error).__name__, tuple(c.__name__ for c in type(error).__mro__), str(error), frames
        )

    @classmethod
    def from_record(
        cls, exc_type: str, exc_types: Sequence[str], message: str, frames: Iterable[Sequence[Any]]
    ) -> Failure:
        """The summary of an exception recorded as plain data (by a child process):
        ``frames`` holds ``(file, lineno, function, source)`` rows."""
        return cls(exc_type, tuple(exc_types), message, tuple(Frame(*map_row(f)) for f in frames))

    @property
    def first_line(self) -> str:
        """``TypeError: <the first line of the message>``."""
        lines = self.message.strip().splitlines()
        return f"{self.exc_type}: {lines[0]}" if lines else self.exc_type

    @property
    def raised_at(self) -> Frame | None:
        """The innermost frame, where the exception was raised (None without frames)."""
        return self.frames[-1] if self.frames else None

    def last_frame_in(self, package: str) -> Frame | None:
        """The innermost frame whose file lies in ``package`` (``"optax"``), or None."""
        return next((f for f in reversed(self.frames) if f.within(package)), None)

    @property
    def where(self) -> list[str]:
        """``file.py:function`` of every frame, outermost first."""
        return [f.where for f in self.frames]

    def is_a(self, exc: str | type[BaseException]) -> bool:
        """Whether the exception is ``exc`` or a subclass of it (by class name)."""
        return (exc if isinstance(exc, str) else exc.__name__) in self.exc_types

    def __str__(self) -> str:
        return self.first_line


def map_row(row: Sequence[Any]) -> tuple[str, int, str, str]:
    """A recorded frame row as ``Frame`` arguments (the source line is optional)."""
    file, lineno, function, *source = row
    return str(file), int(lineno), str(function), str(source[0]) if source else ""


def capture(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Failure | None:
    """Call ``call(*args, **kwargs)``; the :class:`Failure` it raises, or None if it
    returns. Only ``Exception`` is caught: an interrupt still stops the notebook."""
    try:
        call(*args, **kwargs)
    except Exception as error:
        return Failure.of(error)
    return None
