"""A traceback, read: its frames and its last exception's type and message.

``explain`` matches a family's patterns against the message, and its frame signatures
against the frames, so it reads a traceback the way Python and IPython print one (``File
"…/optax/_src/linesearch.py", line 1286, in _value_and_slope_on_line`` and ``File
…/linesearch.py:1286, in _value_and_slope_on_line(...)``), chained ones included (the last
exception is the one raised). Whatever else it is given (an empty text, binary garbage, a
log of megabytes, a Java stack trace) it reads as a text with no Python exception in it,
never with an error of its own: the text is cut to its last :data:`LIMIT` characters
before anything is matched, so every step is linear in a bounded size.

Standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The characters of a text ``explain`` reads: its last ones, where a log's traceback is.
LIMIT = 200_000

_ANSI = re.compile(r"\x1b\[[0-9;]{0,20}[A-Za-z]")
_PYTHON = re.compile(
    r'^\s{0,8}File "(?P<file>[^"\n]{1,500})", line (?P<line>\d{1,9}), in (?P<func>\S{1,300})'
)
_IPYTHON = re.compile(
    r"^\s{0,8}File (?P<file>\S{1,500}):(?P<line>\d{1,9}), in (?P<func>[^\s(]{1,300})"
)
_CELL = re.compile(r"^\s{0,8}(?P<file>Cell In ?\[\d{1,9}\]), line (?P<line>\d{1,9})")
_EXCEPTION = re.compile(
    r"^(?P<type>(?:[A-Za-z_]\w{0,100}\.){0,8}[A-Z]\w{0,100}(?:Error|Exception|Warning|Exit|Interrupt))"
    r"(?::(?P<message> .{0,100000})?)?$"
)
_END = ("-" * 20, "The above exception", "During handling of the above exception", "Traceback (")
_LIBRARIES = ("optax", "equinox", "diffrax")


@dataclass(frozen=True)
class Frame:
    """One frame: its file, line, function and the source line Python printed under it."""

    file: str
    line: int
    function: str
    source: str = ""

    @property
    def library(self) -> str:
        """The library the frame's file belongs to (``"optax"``), or ``""`` for the
        user's own code (and for jax itself, whose frames any code passes through)."""
        parts = self.file.replace("\\", "/").split("/")
        return next((p for p in parts[:-1] if p in _LIBRARIES), "")

    @property
    def where(self) -> str:
        """``train.py:13``: the file's name and the line."""
        return f"{self.file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{self.line}"

    def matches(self, signature: str) -> bool:
        """Whether the frame is ``"file.py"`` or ``"file.py:function"`` (a suffix of the
        path, then the function's name, or the end of a dotted name), or in ``"folder/"``
        (a folder of the path: ``"optax/"``)."""
        path, _, function = signature.partition(":")
        file = self.file.replace("\\", "/")
        if path.endswith("/"):
            return f"/{path}" in file
        if not file.endswith(path):
            return False
        return not function or self.function == function or self.function.endswith("." + function)


@dataclass(frozen=True)
class Traceback:
    """What ``explain`` reads of a text: the last exception's ``exc_type`` and ``message``
    (empty when the text holds none) and the frames of its traceback, innermost last."""

    exc_type: str
    message: str
    frames: tuple[Frame, ...]

    @property
    def libraries(self) -> tuple[str, ...]:
        """The libraries (optax, equinox, diffrax) whose frames are in the traceback."""
        return tuple(dict.fromkeys(f.library for f in self.frames if f.library))

    def has(self, signature: str) -> Frame | None:
        """The innermost frame that ``signature`` names, or None."""
        return next((f for f in reversed(self.frames) if f.matches(signature)), None)

    @staticmethod
    def is_own(frame: Frame) -> bool:
        """Whether ``frame`` is of the user's own code (not a library's, not jax's, not
        Python's)."""
        path = frame.file.replace("\\", "/")
        return not frame.library and "site-packages/" not in path and "/lib/python" not in path

    def own_frame(self) -> Frame | None:
        """The innermost frame of the user's own code, where a generic error was raised
        from."""
        return next((f for f in reversed(self.frames) if self.is_own(f)), None)


def is_text(text: str) -> bool:
    """False for binary garbage: NULs, or more than one character in ten undecodable or a
    control character."""
    sample = text[:4096]
    if "\x00" in sample:
        return False
    odd = sum(1 for c in sample if c == "\ufffd" or (ord(c) < 32 and c not in "\t\n\r\x1b\x0c"))
    return odd * 10 <= len(sample)


def _frame(line: str, source: str) -> Frame | None:
    for pattern in (_PYTHON, _IPYTHON, _CELL):
        m = pattern.match(line)
        if m:
            func = m.groupdict().get("func") or "<cell>"
            return Frame(m["file"], int(m["line"]), func, source.strip())
    return None


def parse(text: str) -> Traceback:
    """The last exception of ``text`` and the frames of its traceback (see the module)."""
    lines = _ANSI.sub("", text[-LIMIT:]).splitlines()
    start = max((i for i, line in enumerate(lines) if line.startswith("Traceback (")), default=-1)
    frames: list[Frame] = []
    found: tuple[str, list[str]] | None = None
    for i in range(start + 1, len(lines)):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        frame = _frame(line, nxt if nxt.startswith("    ") and not _frame(nxt, "") else "")
        if frame and found is None:
            frames.append(frame)
            continue
        m = _EXCEPTION.match(line)
        if m and (found is None or not found[1]):
            found = (m["type"], [(m["message"] or "").strip()])
        elif found is not None:
            if line.startswith(_END):
                break
            found[1].append(line)
    if found is None:  # a pasted message, no traceback: its last "Type: message" line
        for i in range(len(lines) - 1, -1, -1):
            m = _EXCEPTION.match(lines[i])
            if m:
                found = (m["type"], [(m["message"] or "").strip(), *lines[i + 1 :]])
                break
    if found is None:
        return Traceback("", "", tuple(frames))
    exc_type = found[0].rsplit(".", 1)[-1]
    return Traceback(exc_type, "\n".join(found[1]).strip(), tuple(frames))
