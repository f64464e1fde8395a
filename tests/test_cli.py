"""The stdlib command line (``python3 -m casebook ...``): routing, Python check, locks."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys

import pytest

from casebook import __main__ as cli, lock
from casebook.maintainer.tools import environment

READS_PAGES = False


@pytest.fixture
def calls(monkeypatch):
    seen = []
    monkeypatch.setattr(environment, "setup", lambda gpu=False: seen.append(("setup", gpu)) or "py")
    monkeypatch.setattr(
        environment,
        "sh",
        lambda cmd, **kw: seen.append(("sh", [str(c) for c in cmd], kw.get("env", {}))),
    )
    return seen


def test_test_runs_pytest_nbmake_on_notebooks_book_and_tests_by_default(calls):
    cli.main(["test"])
    assert calls[0] == ("setup", False)
    command, env = calls[1][1], calls[1][2]
    assert command[:3] == ["py", "-m", "pytest"] and command[3:7] == [
        "-n",
        "auto",
        "--maxprocesses",
        "4",
    ]
    # the lessons page's whole run is tests/test_lessons_families.py's first test
    assert command[-5:] == [
        "--nbmake",
        "--deselect=book/lessons.ipynb::lessons.ipynb",
        *("notebooks/", "book/", "tests/"),
    ]
    assert env["CASEBOOK_SUITE_LOCK"].endswith("suite.lock")  # benchmarks time alone


def test_gpu_flag_reaches_setup_and_is_not_a_path(calls):
    cli.main(["test", "--gpu", "notebooks/"])
    assert calls[0] == ("setup", True)
    assert calls[1][1][-2:] == ["--nbmake", "notebooks/"]


def test_unknown_command_prints_the_usage():
    with pytest.raises(SystemExit) as e:
        cli.main(["frobnicate"])
    assert "python3 -m casebook" in str(e.value)


@pytest.mark.parametrize("flag", cli.HELP)
def test_help_alone_prints_the_usage_and_succeeds(flag, capsys):
    cli.main([flag])  # no SystemExit: exit status 0
    out = capsys.readouterr().out
    assert out.startswith(cli.__doc__.split("\n")[0]) and "``--gpu``" in out
    # the reader's usage: no notes for the book's developers, no Sphinx roles
    assert "only dispatches" not in out and not re.search(r":[a-z]+:`", out), out


@pytest.mark.parametrize("version", [(3, 11), (3, 10), (2, 7)])
def test_an_old_python_gets_the_supported_versions_and_how_to_get_one(version):
    message = lock.python_problem(version)
    assert f"this is Python {version[0]}.{version[1]}" in message
    assert "3.12, 3.13, 3.14" in message and "pyenv install 3.13" in message


@pytest.mark.parametrize("version", [(3, 12), (3, 13), (3, 14)])
def test_supported_pythons_pass(version):
    assert lock.python_problem(version) is None


def test_the_command_stops_on_python_3_11_with_the_message(tmp_path):
    """Run the real module on a 3.11 interpreter where one exists (this machine has one)."""
    py311 = next(
        (
            p
            for p in ("python3.11",)
            if subprocess.run(["which", p], capture_output=True).returncode == 0
        ),
        None,
    )
    if py311 is None:
        pytest.skip("no python3.11 on PATH")
    proc = subprocess.run(
        [py311, "-m", "casebook", "test"], cwd=environment.ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 1 and "needs Python 3.12, 3.13, 3.14" in proc.stderr


def test_gpu_lock_is_the_cpu_lock_plus_the_cuda_13_build_of_the_same_jax():
    cpu = {n: v for n, v, _ in lock.locked_pins(lock.REQUIREMENTS)}
    gpu = {n: v for n, v, _ in lock.locked_pins(lock.GPU_REQUIREMENTS)}
    assert gpu["jax-cuda13-plugin"] == gpu["jax-cuda13-pjrt"] == cpu["jax"] == cpu["jaxlib"]
    shared = cpu.keys() & gpu.keys()
    assert {n for n in shared if cpu[n] != gpu[n]} == set()
    assert not any("cuda12" in n for n in gpu)


def test_every_pin_has_a_hash_and_the_lock_has_a_date():
    text = lock.REQUIREMENTS.read_text()
    blocks = [b for b in text.split("\n") if b and not b.startswith((" ", "#"))]
    assert blocks and all(b.rstrip().endswith("\\") for b in blocks), "a pin without --hash"
    assert len(lock.locked_on()) == 10


def test_venv_python_version_is_read_from_pyvenv_cfg(tmp_path):
    (tmp_path / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.7\n")
    assert environment._venv_version(tmp_path) == "3.11"
    assert environment._venv_version(tmp_path / "none") == ""


def test_module_imports_on_this_python_without_jax():
    proc = subprocess.run(
        [sys.executable, "-c", "import casebook.__main__, sys; assert 'jax' not in sys.modules"],
        cwd=environment.ROOT,
    )
    assert proc.returncode == 0


def test_the_book_command_keeps_the_kernel_s_tcp_warning_out_and_fails_as_its_build(capsys):
    """The build's own kernel (book/how-to-read.md) prints ipykernel's TCP warning: the
    book command runs the build dropping it (``environment.sh(drop=...)``), which passes
    every other line through, in order, and fails when the build does."""
    from casebook.maintainer.tools import book

    chatter = f"[IPKernelApp] WARNING | {book.KERNEL_CHATTER}. All communication ..."
    script = f"import sys; print('reading'); print({chatter!r}, file=sys.stderr); print('done')"
    environment.sh([sys.executable, "-c", script], drop=book.KERNEL_CHATTER)
    echoed, _, out = capsys.readouterr().out.partition("\n")
    assert echoed.startswith("+ ") and out == "reading\ndone\n"
    with pytest.raises(subprocess.CalledProcessError):
        environment.sh([sys.executable, "-c", "raise SystemExit(3)"], drop=book.KERNEL_CHATTER)


def test_the_book_command_builds_dropping_the_kernel_s_tcp_warning(monkeypatch):
    from pathlib import Path

    from casebook.maintainer.tools import book

    seen = []
    monkeypatch.setattr(environment, "setup", lambda gpu=False: Path("/venv/bin/python"))
    monkeypatch.setattr(environment, "sh", lambda cmd, **kw: seen.append((str(cmd[0]), kw)))
    book.build()
    builds = [kw for first, kw in seen if first.endswith("jupyter-book")]
    assert builds and builds[0].get("drop") == book.KERNEL_CHATTER


SPELLINGS = sorted([(n,) for n in cli.COMMANDS] + list(cli.MODES))  # and modes: setup --lock
OWN = [s for s in SPELLINGS if cli.MODES.get(s, cli.COMMANDS[s[0]]).own_help]


@pytest.mark.parametrize("spelling", [s for s in SPELLINGS if s not in OWN], ids=" ".join)
def test_help_prints_the_command_s_usage_and_runs_nothing(spelling, monkeypatch, capsys):
    """``book --help`` once built the book, ``lock --help`` rewrote the locks and
    ``profile --help`` crashed: a command or mode without a parser of its own answers
    ``--help`` from the module's text, and is not called."""
    monkeypatch.setattr(cli.Command, "__call__", lambda *a: pytest.fail(f"{spelling} ran"))
    for flag in cli.HELP:
        cli.main([*spelling, flag])
        shown = capsys.readouterr().out
        signature, description = shown.split("\n\n")[:2]
        # the command, then only its placeholders: no word of the description
        command, *placeholders = signature.removeprefix("usage: python3 -m casebook ").split()
        assert command == spelling[0], signature
        assert all(w[0] == "[" or w[-1] == "]" or w.isupper() for w in placeholders), signature
        assert len(description) > 20, shown


@pytest.mark.parametrize("spelling", OWN, ids=" ".join)
def test_a_command_with_its_own_parser_answers_help_itself(spelling, capsys):
    command = cli.MODES.get(spelling, cli.COMMANDS[spelling[0]])
    with pytest.raises(SystemExit) as e:
        getattr(importlib.import_module(command.module), command.function)(["--help"])
    assert e.value.code == 0 and capsys.readouterr().out.startswith("usage: ")


BEFORE = "setup fetch book test device lock latest colab-sim sync bench profile check-corpus"
BEFORE += " explain workshop new new-case"  # the 17 names of issue 50's time, but for
# `pool`, which listed and stopped the machine's warm servers: a kernel's own end with it


def test_the_help_lists_at_most_8_commands_and_every_older_name_says_its_spelling(capsys):
    """Issue 50: the commands became 8, by concern; a command of an older book stops with
    the spelling that does its work now, and that spelling runs a function that exists."""
    listed = re.findall(r"^  ([a-z]+)(?: |$)", cli.__doc__, re.MULTILINE)
    assert sorted(listed) == sorted(cli.COMMANDS) and len(listed) <= 8
    for old in BEFORE.split():
        if old in cli.COMMANDS:
            continue
        with pytest.raises(SystemExit) as e:
            cli.main([old])
        new = cli.MOVED[old][0]
        assert str(e.value).endswith(f"python3 -m casebook {new}"), e.value
        command, *flag = new.split()  # a mode, or a flag of the command's own parser
        assert not flag or (command, *flag) in cli.MODES or cli.COMMANDS[command].own_help
    for mode in cli.MODES.values():
        assert callable(getattr(importlib.import_module(mode.module), mode.function))


def test_a_mode_runs_its_function_with_the_arguments_after_its_flag(monkeypatch):
    from casebook.maintainer.tools import colabsim

    seen = []
    monkeypatch.setattr(colabsim, "main", seen.append)
    cli.main(["test", "--colab-sim", "--gpu", "book/lessons.ipynb"])
    assert seen == [["book/lessons.ipynb"]]


def test_setup_sets_up_then_prints_the_device(calls, monkeypatch):
    """(``setup(gpu=True)`` checks the device itself, for ``test --gpu`` too.)"""
    monkeypatch.setattr(environment, "device", lambda gpu=False: calls.append(("device", gpu)))
    cli.main(["setup"])
    cli.main(["setup", "--gpu"])
    assert calls == [("setup", False), ("device", False), ("setup", True)]
