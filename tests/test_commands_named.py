"""Every ``python3 -m casebook COMMAND`` the docs, pages, workflows and messages write runs:
issue 50 folded 16 commands into 8, and a renamed one survives in text for long."""

from __future__ import annotations

import re

from casebook import __main__ as cli
from casebook.project import ROOT

TEXTS = ["README.md", "CONTRIBUTING.md", ".ci/run", "binder/postBuild", ".github/workflows/*.yml"]
TEXTS += ["book/*.md", "notebooks/*.md", "casebook/**/*.py", "casebook/**/*.toml", "tests/*.py"]
NAMED = re.compile(r"python3? -m casebook ([a-z][a-z-]*)")


def test_every_command_the_texts_name_is_one():
    stale = {
        f"{path.relative_to(ROOT)}:{n}"
        for pattern in TEXTS
        for path in ROOT.glob(pattern)
        for n, line in enumerate(path.read_text().splitlines(), 1)
        for command in NAMED.findall(line)
        if command not in cli.COMMANDS
    }
    assert not stale, sorted(stale)
