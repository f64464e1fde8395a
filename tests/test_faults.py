"""Faults leave nothing half-written: a full disk under the cache, the records, a stamp.

Each test mounts a small tmpfs (root only; skipped elsewhere), fills it, and checks that
the failing write raised a clear error, kept the old content (or nothing), and left no
temporary file or half-built environment behind.
"""

from __future__ import annotations

import errno
import hashlib
import subprocess
from pathlib import Path

import pytest

from casebook import storage
from casebook.bench import records
from casebook.releases import _envs, errors

READS_PAGES = False


@pytest.fixture
def full_disk(tmp_path):
    """A 64 KiB tmpfs, filled to the last block; unmounted afterwards."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        (mount / "keep").mkdir()
        (mount / "keep" / "record.json").write_text('{"old": true}\n')
        with open(mount / "filler", "wb") as f:
            try:
                while True:
                    f.write(b"\0" * 4096)
                    f.flush()
            except OSError as e:
                assert e.errno == errno.ENOSPC
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def _litter(directory: Path) -> list[str]:
    return sorted(
        p.name for p in directory.rglob("*") if p.name.startswith(".") or ".tmp" in p.name
    )


def test_a_full_disk_keeps_the_old_record_and_leaves_no_temporary_file(full_disk):
    target = full_disk / "keep" / "record.json"
    with pytest.raises(OSError) as raised:
        storage.write_atomic(target, "x" * 200_000)
    assert raised.value.errno == errno.ENOSPC
    assert target.read_text() == '{"old": true}\n'
    assert _litter(full_disk) == []


def test_a_full_disk_under_the_records_store_fails_cleanly(full_disk):
    timings = records.Timings(
        wall={"a": [1.0] * 20_000}, cpu={"a": [1.0] * 20_000}, faults={"a": [0.0] * 20_000}
    )
    with pytest.raises(OSError):
        records.save(timings, "case", "bench", store=full_disk / "keep")
    assert _litter(full_disk) == []
    assert not list((full_disk / "keep").rglob("*.json"))[1:]  # only the old record


def test_a_full_disk_under_the_cache_leaves_no_half_environment(full_disk, tmp_path):
    """Building an environment onto a full disk: an error, and neither an environment nor
    a scratch folder (the next build starts clean)."""
    from test_releases import _wheel

    wheel = _wheel(tmp_path, "1.0", "X = '" + "y" * 100_000 + "'\n")
    sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    pins = f"--no-index\n--find-links {tmp_path}\nfakepkg==1.0 --hash=sha256:{sha}\n"
    env = _envs.Env("fakepkg==1.0", _envs.THIS_PYTHON, pins, "a full disk")
    with pytest.raises((OSError, errors.ReleaseError)):
        _envs.ensure(env, cache=full_disk, log=lambda _: None, online=False)
    assert not _envs.venv_dir(env, full_disk).exists()
    assert [p.name for p in (full_disk / "envs").glob("*partial*")] == []
