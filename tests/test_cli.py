"""The stdlib command line (``python3 -m casebook ...``): argument routing and set-up stamp."""

from __future__ import annotations

import pytest

from casebook import __main__ as cli


@pytest.fixture
def calls(monkeypatch):
    seen = []
    monkeypatch.setattr(cli, "setup", lambda gpu=False: seen.append(("setup", gpu)) or "py")
    monkeypatch.setattr(cli, "_sh", lambda cmd, **kw: seen.append(("sh", [str(c) for c in cmd])))
    return seen


def test_test_runs_pytest_nbmake_on_notebooks_and_tests_by_default(calls):
    cli.main(["test"])
    assert calls[0] == ("setup", False)
    assert calls[1][1][-5:] == ["pytest", "--nbmake", "notebooks/", "book/", "tests/"]


def test_gpu_flag_reaches_setup_and_is_not_a_path(calls):
    cli.main(["test", "--gpu", "notebooks/"])
    assert calls[0] == ("setup", True)
    assert calls[1][1][-3:] == ["pytest", "--nbmake", "notebooks/"]


def test_unknown_command_prints_the_usage():
    with pytest.raises(SystemExit) as e:
        cli.main(["frobnicate"])
    assert "python3 -m casebook" in str(e.value)


def test_gpu_requirements_add_only_the_cuda_plugin():
    """requirements-gpu.txt must not re-pin what requirements.txt pins (one source of truth)."""
    def names(path):
        return {line.split("==")[0].lower() for line in path.read_text().splitlines()
                if line and not line.startswith("#")}
    gpu = names(cli.GPU_REQUIREMENTS)
    assert {"jax-cuda12-plugin", "jax-cuda12-pjrt"} <= gpu
    assert not gpu & names(cli.REQUIREMENTS)


def test_cuda_plugin_matches_the_pinned_jax():
    pins = dict(line.split("==") for line in cli.REQUIREMENTS.read_text().splitlines()
                if "==" in line and not line.startswith("#"))
    gpu = dict(line.split("==") for line in cli.GPU_REQUIREMENTS.read_text().splitlines()
               if "==" in line and not line.startswith("#"))
    assert gpu["jax-cuda12-plugin"] == gpu["jax-cuda12-pjrt"] == pins["jax"] == pins["jaxlib"]
