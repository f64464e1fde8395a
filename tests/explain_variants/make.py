"""Make the variant corpus of ``explain``: real tracebacks of today's stack, one file each.

Issue 33: readers arrive with their own variant of a case (another optimizer, another
non-array leaf, another loop, another entry point), and ``explain`` must still land on the
family, while a traceback of another kind gets "no match". Each entry of :data:`VARIANTS`
is a small program; this script runs each in a fresh process of the worktree's interpreter
(as ``train.py`` in a temporary folder), and stores its traceback, as Python printed it, in
``<family>/<name>.txt``, with the folder, the venv's prefix and the base interpreter's written
as neutral paths (``/home/user/project``, ``/home/user/.venv``, ``/usr``) so the files do not depend on the
machine. ``expected.json`` holds, for each file, the family and the owner (a case key, a
finding, or ``lessons``) whose card must come first; ``unrelated`` files expect no match.

    .venv/bin/python tests/explain_variants/make.py            # all
    .venv/bin/python tests/explain_variants/make.py NAME...    # some

``tests/test_explain_variants.py`` reads the files (it runs nothing).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent

sys.path.insert(0, str(HERE))
from programs import VARIANTS  # noqa: E402


def neutral(text: str, folder: str) -> str:
    """The traceback with this machine's paths written as neutral ones."""
    text = text.replace(folder, "/home/user/project")
    text = text.replace(sys.prefix, "/home/user/.venv")
    return text.replace(sys.base_prefix, "/usr")  # the standard library's own frames


def run(name: str) -> str:
    """The traceback ``VARIANTS[name]`` prints, run as ``train.py`` in a fresh process."""
    program = textwrap.dedent(VARIANTS[name][2]).lstrip("\n")
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "train.py").write_text(program)
        proc = subprocess.run(
            [sys.executable, "train.py"], cwd=folder, capture_output=True, text=True, timeout=300
        )
        if proc.returncode == 0 or "Traceback (most recent call last)" not in proc.stderr:
            raise RuntimeError(f"{name} raised nothing:\n{proc.stdout}{proc.stderr}")
        return neutral(proc.stderr, str(Path(folder).resolve()))


def main(names: list[str]) -> None:
    expected = {n: {"family": f, "owner": o} for n, (f, o, _) in VARIANTS.items()}
    failed = []
    for name in names or list(VARIANTS):
        family = VARIANTS[name][0]
        (HERE / family).mkdir(exist_ok=True)
        try:
            (HERE / family / f"{name}.txt").write_text(run(name))
        except RuntimeError as error:
            failed.append(name)
            print(error)
            continue
        print(f"{family}/{name}.txt")
    (HERE / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    if failed:
        raise SystemExit(f"raised nothing: {failed}")


if __name__ == "__main__":
    main(sys.argv[1:])
