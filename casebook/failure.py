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
    """One frame of a traceback: file path, line number, function, source line.

    Args:
        file: the path of the frame's file, as the traceback gives it.
        lineno: the line number in that file.
        function: the name of the function (``<module>`` at a module's top level).
        source: the source line, stripped (empty where the traceback has none).

    Examples:
        >>> frame = Frame("/x/optax/_src/transforms/_masking.py", 3, "init_fn")
        >>> frame.where, frame.relative_to("optax")
        ('_masking.py:init_fn', 'transforms/_masking.py:init_fn')
    """

    file: str
    lineno: int
    function: str
    source: str = ""

    @property
    def where(self) -> str:
        """``file.py:function``, the file's name without its directory.

        Examples:
            >>> Frame("/x/optax/_src/wrappers.py", 12, "update", "...").where
            'wrappers.py:update'
        """
        return f"{PurePath(self.file).name}:{self.function}"

    def within(self, package: str) -> bool:
        """Whether the frame's file lies inside a directory named ``package``.

        Args:
            package: a directory name, such as ``"optax"``.

        Returns:
            True when a directory of the file's path (not the file itself) is
            ``package``.

        Examples:
            >>> Frame("/x/optax/_src/wrappers.py", 12, "update").within("optax")
            True
        """
        return package in PurePath(self.file).parts[:-1]

    def relative_to(self, package: str) -> str:
        """``schedules/_inject.py:__call__``: the file's path below ``package/`` (and
        below its ``_src/``), then the function.

        Args:
            package: the directory to cut the path at, such as ``"optax"``.

        Returns:
            ``path/below/package.py:function``, or :attr:`where` when the file does not
            lie in ``package``.

        Examples:
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


@dataclass(frozen=True, repr=False)
class Failure(PlainText):
    """An exception, summarised: its type and its classes' names, its message, and its
    frames (outermost first, as a traceback prints them).

    Make one with :func:`capture`, :meth:`Failure.of` or :meth:`Failure.from_record`;
    a run on a release gives one as :attr:`casebook.releases.Outcome.failure`. It prints
    as its :attr:`first_line`.

    Args:
        exc_type: the exception's class name, ``"TypeError"``.
        exc_types: the names of its classes, most derived first (its ``__mro__``).
        message: ``str`` of the exception, every line of it.
        frames: the traceback's :class:`Frame` s, outermost first.

    Examples:
        >>> def parse(text):
        ...     return int(text)
        >>> failure = capture(parse, "x")
        >>> print(failure)
        ValueError: invalid literal for int() with base 10: 'x'
        >>> failure.exc_type, failure.is_a(Exception), failure.raised_at.function
        ('ValueError', True, 'parse')
    """

    exc_type: str
    exc_types: tuple[str, ...]
    message: str
    frames: tuple[Frame, ...] = ()

    @classmethod
    def of(cls, error: BaseException) -> Failure:
        """The summary of a live exception.

        Args:
            error: the exception, with its traceback (as caught by ``except``).

        Returns:
            Its :class:`Failure`.

        Examples:
            >>> try:
            ...     {"w": 1}["b"]
            ... except KeyError as error:
            ...     failure = Failure.of(error)
            >>> failure.first_line, failure.exc_types
            ("KeyError: 'b'", ('KeyError', 'LookupError', 'Exception', 'BaseException', 'object'))
        """
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
        """The summary of an exception recorded as plain data (by a child process).

        Args:
            exc_type: the exception's class name.
            exc_types: the names of its classes, most derived first.
            message: its message.
            frames: ``(file, lineno, function, source)`` rows, outermost first; the
                source may be left out.

        Returns:
            The :class:`Failure`.

        Examples:
            >>> failure = Failure.from_record(
            ...     "TypeError", ["TypeError", "Exception"], "cond branches differ",
            ...     [("/x/optax/_src/wrappers.py", 435, "update"), ("/x/jax/_src/lax.py", 9, "cond")],
            ... )
            >>> failure.where
            ['wrappers.py:update', 'lax.py:cond']
        """
        return cls(exc_type, tuple(exc_types), message, tuple(Frame(*map_row(f)) for f in frames))

    @property
    def first_line(self) -> str:
        """``TypeError: <the first line of the message>`` (the type alone for an empty
        message).

        Examples:
            >>> Failure("ValueError", ("ValueError",), "bad value\\nmore detail").first_line
            'ValueError: bad value'
        """
        lines = self.message.strip().splitlines()
        return f"{self.exc_type}: {lines[0]}" if lines else self.exc_type

    @property
    def raised_at(self) -> Frame | None:
        """The innermost :class:`Frame`, where the exception was raised (None without
        frames)."""
        return self.frames[-1] if self.frames else None

    def last_frame_in(self, package: str) -> Frame | None:
        """The innermost frame whose file lies in ``package``.

        Args:
            package: a directory name, such as ``"optax"`` (see :meth:`Frame.within`).

        Returns:
            The :class:`Frame`, or None when no frame lies in ``package``.

        Examples:
            >>> failure = Failure.from_record("TypeError", ["TypeError"], "", [
            ...     ("/x/optax/_src/wrappers.py", 435, "update"), ("/x/jax/_src/lax.py", 9, "cond")])
            >>> failure.last_frame_in("optax").relative_to("optax")
            'wrappers.py:update'
            >>> failure.raised_at.where
            'lax.py:cond'
        """
        return next((f for f in reversed(self.frames) if f.within(package)), None)

    @property
    def where(self) -> list[str]:
        """:attr:`Frame.where` (``file.py:function``) of every frame, outermost first."""
        return [f.where for f in self.frames]

    def is_a(self, exc: str | type[BaseException]) -> bool:
        """Whether the exception is ``exc`` or a subclass of it (by class name).

        Args:
            exc: an exception class, or its name (``"TypeError"``), so that a failure
                recorded on another release can be asked about a class this process
                does not have.

        Returns:
            True when ``exc`` is one of the exception's classes.

        Examples:
            >>> failure = capture(int, "x")
            >>> failure.is_a(ValueError), failure.is_a("Exception"), failure.is_a(TypeError)
            (True, True, False)
        """
        return (exc if isinstance(exc, str) else exc.__name__) in self.exc_types

    def __str__(self) -> str:
        return self.first_line


def map_row(row: Sequence[Any]) -> tuple[str, int, str, str]:
    """A recorded frame row as ``Frame`` arguments (the source line is optional)."""
    file, lineno, function, *source = row
    return str(file), int(lineno), str(function), str(source[0]) if source else ""


def capture(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Failure | None:
    """Call ``call(*args, **kwargs)``; the :class:`Failure` it raises, or None if it
    returns. Only ``Exception`` is caught: an interrupt still stops the notebook.

    Args:
        call: what to call.
        *args: its positional arguments.
        **kwargs: its keyword arguments.

    Returns:
        The :class:`Failure` of the exception it raised, or None when it returned (its
        return value is dropped).

    Examples:
        >>> capture(int, "x").first_line
        "ValueError: invalid literal for int() with base 10: 'x'"
        >>> capture(int, "12") is None
        True
    """
    try:
        call(*args, **kwargs)
    except Exception as error:
        return Failure.of(error)
    return None
