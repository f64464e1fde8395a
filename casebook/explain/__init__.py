"""Which case answers an error: ``python3 -m casebook explain`` and ``%load_ext casebook``.

Like ``rustc --explain``, but read from the traceback itself. Both read the registry: the
cases' messages (:class:`~casebook.cases.Message`, the data the Errors page is made from)
and the families' signatures (:data:`~casebook.cases.SIGNATURES`,
``casebook/check/families.toml``), so the terminal, the notebook and the book give the same
answer. A wording of the book's, word for word, gets its case's card; a reader's own
variant (another optimizer, another non-array leaf, another loop) gets its family's card
with why it matched, how it differs from the book's case, and the ``check_optimizer`` call
to run next; a generic wording the reader's own code raised is said to be theirs; anything
else is "no match". The modules: ``_parse`` (the traceback read), ``_patterns`` (the
families' patterns compiled), ``_rank`` (the scores and reasons), ``_answer`` (the words).

Standard library only: ``explain`` runs before anything else is installed, and the IPython
extension costs nothing until a cell raises. Bad input (empty, binary, a log of megabytes,
another language's trace) is answered in one line with exit status 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from pathlib import Path
from typing import Any

from casebook.cases import normalize
from casebook.explain._answer import ERRORS_PAGE, answer, card, hint_line
from casebook.explain._parse import is_text
from casebook.explain._rank import Ranking, find, rank
from casebook.project import BOOK_URL

__all__ = [
    "BOOK_URL",
    "ERRORS_PAGE",
    "Ranking",
    "card",
    "explain",
    "find",
    "load_ipython_extension",
    "main",
    "normalize",
    "rank",
]


def explain(text: str) -> str:
    """The answer to ``text`` (a traceback, or a message): the best cards with why they
    matched, or "no match"."""
    return answer(rank(text))


def _read(args: argparse.Namespace) -> str:
    if args.file:
        data = args.file.read_bytes()
    elif args.text:
        return " ".join(args.text)
    else:
        data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:  # a log in another encoding: every byte is a character
        return data.decode("latin-1")


def main(argv: list[str]) -> int:
    """``python3 -m casebook explain [TEXT | --file F]``, or the text on standard input;
    exit 0 when a card matched, 1 when none did (and on bad input, said in one line)."""
    parser = argparse.ArgumentParser(
        prog="python3 -m casebook explain",
        description="Read a traceback or an error message; print the case that explains it.",
    )
    parser.add_argument("text", nargs="*", help="the message (default: read standard input)")
    parser.add_argument("--file", type=Path, help="read the traceback from this file")
    args = parser.parse_args(argv)
    try:
        text = _read(args)
        if not text.strip():
            print(
                "casebook explain: empty input: give a traceback (a file, an argument or standard input)"
            )
            return 1
        if not is_text(text):
            print("casebook explain: this is not text (binary data?): give a traceback as text")
            return 1
        ranking = rank(text)
        print(answer(ranking))
        return 0 if ranking.candidates else 1
    except BrokenPipeError:  # `explain ... | head`: the reader has what they wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as error:  # never a traceback of its own: one line, status 1
        print(f"casebook explain: cannot read this input ({type(error).__name__}: {error})"[:300])
        return 1


def _hint(etype: type[BaseException], value: BaseException, tb: Any = None) -> str | None:
    text = "".join(traceback.format_exception(etype, value, tb))
    return hint_line(rank(text))


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext casebook``: under a traceback the book knows (a case's wording, or a
    family's signature, ranked as ``explain`` ranks it), one line says which case, finding
    or family it is and where the fix is. The traceback is shown as IPython shows it,
    unchanged; nothing runs until a cell raises."""

    def handler(shell: Any, etype: Any, value: Any, tb: Any, tb_offset: Any = None) -> Any:
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        try:
            hint = _hint(etype, value, tb)
        except Exception:  # the hint must never hide the user's own error
            hint = None
        if hint:
            print(hint)
        return None

    ipython.set_custom_exc((Exception,), handler)
