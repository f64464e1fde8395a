"""A program for the tests of :mod:`casebook.releases._variants`: one variant returns,
one raises, one prints; the set-up reads an input."""

from casebook.releases.program import inputs, variant

SCALE = inputs().get("scale", 1)


@variant("returns")
def returns() -> dict[str, int]:
    return {"value": 2 * SCALE}


@variant("raises")
def raises() -> None:
    raise ValueError("no such thing")


@variant("prints")
def prints() -> None:
    print("hello from the child")
