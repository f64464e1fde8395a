"""Fixtures shared by the unit tests."""

from __future__ import annotations

import pytest


class FakeShell:
    """The two methods of IPython's shell that ``%load_ext casebook.explain`` uses: the
    hook it registers (``set_custom_exc``), and the traceback it shows (recorded in
    ``shown``), so a test can raise through the hook without an IPython kernel."""

    def __init__(self) -> None:
        self.shown: list[tuple] = []

    def set_custom_exc(self, types, handler) -> None:
        self.handler = handler

    def showtraceback(self, exc_tuple, tb_offset=None) -> None:
        self.shown.append(exc_tuple)


@pytest.fixture
def shell() -> FakeShell:
    """A fresh :class:`FakeShell`."""
    return FakeShell()
