"""``explain`` on bad input: one line, exit status 1, never a traceback of its own (issue
33); and what keeps it fast on any input, asserted without a clock (no timed assert: a
loaded machine must not fail a test). ``explain`` reads only the last
:data:`casebook.explain._parse.LIMIT` characters of a text, so a 10 MB log costs what
200,000 characters do; and every quantifier of every pattern is bounded, so no pattern
backtracks without end. The seconds themselves are figures for a note, not asserts.
"""

from __future__ import annotations

import re
import subprocess
import sys
from re import _constants, _parser  # the regex parser the check walks

import pytest

from casebook import cases, explain
from casebook.explain._parse import LIMIT
from casebook.explain._patterns import compile_pattern
from casebook.project import ROOT

READS_PAGES = False

_JAVA = """Exception in thread "main" java.lang.NullPointerException: Cannot invoke "String.length()"
\tat com.example.Train.step(Train.java:13)
\tat com.example.Train.main(Train.java:5)
"""
_RUST = "thread 'main' panicked at src/main.rs:4:5:\nindex out of bounds: the len is 3 but the index is 7\n"
_LOG = "".join(
    f"step {i:08d} loss 0.{i % 9973:04d} lr 1e-3 throughput 1234.5/s\n" for i in range(190_000)
)

BAD = {
    "empty": b"",
    "blank": b"   \n\n\t",
    "binary": bytes(range(256)) * 4096,
    "binary, no NUL": bytes(range(1, 256)) * 4096,
    "log of 10 MB": _LOG.encode(),
    "java": _JAVA.encode(),
    "rust": _RUST.encode(),
    "latin-1": "TypeError: caf\xe9 d\xe9j\xe0 vu".encode("latin-1"),
}


def _run(data: bytes, tmp_path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "input.txt"
    path.write_bytes(data)
    return subprocess.run(
        [sys.executable, "-m", "casebook", "explain", "--file", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def _in_process(data: bytes, tmp_path, capsys) -> tuple[int, str]:
    """The command's status and output, run in this process."""
    path = tmp_path / "input.txt"
    path.write_bytes(data)
    status = explain.main(["--file", str(path)])
    return status, capsys.readouterr().out


@pytest.mark.parametrize("name", BAD)
def test_bad_input_gets_one_line_and_status_1(name, tmp_path, capsys):
    assert name != "log of 10 MB" or len(BAD[name]) >= 10_000_000
    proc = _run(BAD[name], tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert len(proc.stdout.splitlines()) == 1 and proc.stdout.startswith("casebook explain:"), (
        proc.stdout
    )
    assert "Traceback" not in proc.stdout + proc.stderr
    assert _in_process(BAD[name], tmp_path, capsys) == (1, proc.stdout)


def test_only_the_end_of_a_long_text_is_read(tmp_path, capsys):
    """A traceback at the end of a 10 MB log is answered; the same traceback followed by
    more than LIMIT characters of log is not read at all: the work is bounded by LIMIT."""
    tail = (ROOT / "tests/explain_variants/drift/dog-scan.txt").read_text()
    status, out = _in_process((_LOG + tail).encode(), tmp_path, capsys)
    assert status == 0 and out.startswith("check-findings §2"), out
    after = _LOG[: LIMIT + 1000]
    assert _in_process((tail + after).encode(), tmp_path, capsys)[0] == 1


def test_a_missing_file_is_one_line_too(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "casebook", "explain", "--file", str(tmp_path / "none.txt")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 1 and len(proc.stdout.splitlines()) == 1 and not proc.stderr


PATTERNS = [p.regex for f in cases.FAMILIES for p in f.patterns] + [
    m.regex for s in cases.SIGNATURES for m in s.marks
]


def _unbounded(pattern: re.Pattern[str]) -> list[str]:
    """The repeats of a compiled pattern with no upper bound (``*``, ``+``, ``{n,}``)."""
    found = []

    def walk(items) -> None:
        for op, arg in items:
            if op in (_constants.MAX_REPEAT, _constants.MIN_REPEAT):
                low, high, body = arg
                if high == _constants.MAXREPEAT:
                    found.append(f"{{{low},}}")
                walk(body)
            elif op in (_constants.SUBPATTERN,):
                walk(arg[-1])
            elif op == _constants.BRANCH:
                for branch in arg[1]:
                    walk(branch)
            elif op in (_constants.ASSERT, _constants.ASSERT_NOT):
                walk(arg[1])

    walk(_parser.parse(pattern.pattern))
    return found


@pytest.mark.parametrize("regex", PATTERNS)
def test_every_quantifier_of_every_pattern_is_bounded(regex):
    assert not _unbounded(compile_pattern(regex)), regex


def test_the_bound_check_sees_an_unbounded_repeat():
    """The check can fail: ``.*`` and ``a+`` are found, ``a{1,40}`` is not."""
    assert len(_unbounded(re.compile(r"x.*y(?:a+)"))) == 2
    assert not _unbounded(re.compile(r"(?P<g>a{1,40})|b{0,3}"))
