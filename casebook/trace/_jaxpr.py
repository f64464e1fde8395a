"""Programs as text, cut down to the lines that matter: :func:`jaxpr_text`,
:func:`cut`, :func:`show_jaxpr` (an :class:`Excerpt`), and :func:`count_primitives`
over a jaxpr and the jaxprs nested in it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jax
from jax.extend.core import ClosedJaxpr, Jaxpr

try:
    from jax.extend.core import jaxprs_in_params
except ImportError:  # jax before 0.6 (the era stacks) has it only in jax.core
    from jax.core import jaxprs_in_params  # type: ignore[attr-defined,no-redef]

from casebook.display import PlainText

_ELISION = "    ..."


class Excerpt(PlainText, str):
    """A cut-down jaxpr: a ``str`` (so ``'mul' in excerpt`` works) that IPython
    prints raw, without quotes.  ``marked`` holds the original lines that got a
    mark, so a notebook can assert on them."""

    marked: list[str]

    def __new__(cls, text: str, marked: Sequence[str] = ()) -> Excerpt:
        excerpt = super().__new__(cls, text)
        excerpt.marked = list(marked)
        return excerpt


def jaxpr_text(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
    """The jaxpr of ``fn(*args, **kwargs)`` as plain text (no terminal colour codes,
    which ``str()`` adds inside a Jupyter kernel and which would garble HTML pages).

    Examples:
        >>> print(jaxpr_text(lambda x: x * 2, 1.0))
        { lambda ; a:f32[]. let b:f32[] = mul a 2.0... in (b,) }
    """
    return jax.make_jaxpr(fn)(*args, **kwargs).pretty_print(use_color=False)


def cut(
    text: str,
    keep: str | Sequence[str] | None,
    *,
    context: int = 0,
    mark: Mapping[str, str] | None = None,
) -> Excerpt:
    """Keep the lines of ``text`` that matter.

    A line is kept if it matches (``re.search``) any regex in ``keep`` (a string or
    a sequence of strings; None keeps every line) or any regex key of ``mark``, and
    so are ``context`` lines either side of it.  The first line (a jaxpr's signature)
    and the last (its ``in (...) }``) are always kept.  Each run of dropped lines
    becomes one ``'    ...'`` line.  A kept line matching a key of ``mark`` gets
    ``'   # <-- {note}'`` appended (the first matching key wins).

    Args:
        text: the text to cut, usually from :func:`jaxpr_text`.
        keep: the regexes of the lines to keep (None: every line).
        context: how many lines to keep on either side of a kept line.
        mark: ``{regex: note}``: the lines to keep and point at.

    Returns:
        An :class:`Excerpt`: the cut text, with the marked lines in ``.marked``.

    Examples:
        >>> text = "\\n".join([
        ...     "{ lambda ; a:f32[]. let",
        ...     "    b:f32[] = sin a",
        ...     "    c:i32[] = convert_element_type[new_dtype=int32] b",
        ...     "  in (c,) }",
        ... ])
        >>> print(cut(text, None, mark={"convert": "the cast"}))
        { lambda ; a:f32[]. let
            b:f32[] = sin a
            c:i32[] = convert_element_type[new_dtype=int32] b   # <-- the cast
          in (c,) }
        >>> print(cut(text, "convert"))
        { lambda ; a:f32[]. let
            ...
            c:i32[] = convert_element_type[new_dtype=int32] b
          in (c,) }
    """
    lines = text.rstrip("\n").splitlines()
    marks = dict(mark or {})
    if keep is None:
        wanted = set(range(len(lines)))
    else:
        patterns = [keep] if isinstance(keep, str) else list(keep)
        patterns += list(marks)
        hits = [i for i, line in enumerate(lines) if any(re.search(p, line) for p in patterns)]
        wanted = {
            j for i in hits for j in range(i - context, i + context + 1) if 0 <= j < len(lines)
        }
        if lines:
            wanted |= {0, len(lines) - 1}
    out: list[str] = []
    marked: list[str] = []
    previous = -1
    for i in sorted(wanted):
        if i > previous + 1:
            out.append(_ELISION)
        line = lines[i]
        note = next((n for pattern, n in marks.items() if re.search(pattern, line)), None)
        if note is not None:
            marked.append(line)
            line = f"{line}   # <-- {note}"
        out.append(line)
        previous = i
    return Excerpt("\n".join(out), marked)


def show_jaxpr(
    fn: Callable[..., Any],
    *args: Any,
    keep: str | Sequence[str] | None = None,
    context: int = 0,
    mark: Mapping[str, str] | None = None,
    **kwargs: Any,
) -> Excerpt:
    """The jaxpr of ``fn(*args, **kwargs)``, cut down by :func:`cut`.

    Args:
        fn: the function to trace.
        *args: its arguments (arrays, or anything ``jax.make_jaxpr`` takes).
        keep: as for :func:`cut`.
        context: as for :func:`cut`.
        mark: as for :func:`cut`.
        **kwargs: its keyword arguments.

    Returns:
        The :class:`Excerpt`.

    Examples:
        >>> import jax.numpy as jnp
        >>> excerpt = show_jaxpr(lambda x: jnp.sin(x).astype(jnp.int32), 1.0,
        ...                      keep="convert", mark={"convert": "the cast"})
        >>> print(excerpt)
        { lambda ; a:f32[]. let
            ...
            c:i32[] = convert_element_type[new_dtype=int32...] b   # <-- the cast
          in (c,) }
        >>> "sin" in excerpt, len(excerpt.marked)
        (False, 1)
    """
    return cut(jaxpr_text(fn, *args, **kwargs), keep, context=context, mark=mark)


def count_primitives(
    fn_or_jaxpr: Callable[..., Any] | Jaxpr | ClosedJaxpr, *args: Any, **kwargs: Any
) -> Counter[str]:
    """How many times each primitive appears in a program, nested jaxprs included.

    ``fn_or_jaxpr`` is a (Closed)Jaxpr, or a function traced with ``*args,
    **kwargs``.  The count is static: both branches of a ``cond`` and a loop body
    count once each, and sub-jaxprs of ``jit``, ``scan``, ``custom_jvp_call`` etc.
    are walked as well as the equation that holds them.  Compare two variants'
    counters to see e.g. how many ``convert_element_type`` a fix adds.

    Returns:
        A ``Counter`` of primitive names.

    Examples:
        >>> import jax.numpy as jnp
        >>> count_primitives(lambda x: jnp.sin(x) * 2 + 1, 1.0)
        Counter({'sin': 1, 'mul': 1, 'add': 1})
    """
    if isinstance(fn_or_jaxpr, ClosedJaxpr):
        jaxpr = fn_or_jaxpr.jaxpr
    elif isinstance(fn_or_jaxpr, Jaxpr):
        jaxpr = fn_or_jaxpr
    else:
        jaxpr = jax.make_jaxpr(fn_or_jaxpr)(*args, **kwargs).jaxpr
    counts: Counter[str] = Counter()
    pending = [jaxpr]
    while pending:
        for eqn in pending.pop().eqns:
            counts[eqn.primitive.name] += 1
            pending.extend(jaxprs_in_params(eqn.params))
    return counts
