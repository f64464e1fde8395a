"""On demand (Colab): a missing release or era is downloaded by its first run, its size
printed first, every hash checked; off demand (the test suite), nothing is downloaded."""

from __future__ import annotations

import hashlib

import pytest

from casebook.releases import _manifest, _ondemand
from casebook.releases.errors import HashMismatch, ReleaseError, ReleaseNotCached

LOCK = """\
fakepkg==1.0 \\
    --hash=sha256:{a} \\
    --hash=sha256:{b}
    # via something
purepkg==2.0 \\
    --hash=sha256:{c}
"""


def _file(name: str, digest: str, size: int = 10) -> dict:
    return {
        "filename": name,
        "hashes": {"sha256": digest},
        "size": size,
        "url": f"https://x/{name}",
    }


def test_choose_picks_the_wheel_this_python_would_install(tmp_path):
    a, b, c, other = "a" * 64, "b" * 64, "c" * 64, "d" * 64
    lock = tmp_path / "era.txt"
    lock.write_text(LOCK.format(a=a, b=b, c=c))
    listing = {
        "fakepkg": [
            _file("fakepkg-1.0-cp312-cp312-win_amd64.whl", a),  # hash of the lock, other platform
            _file("fakepkg-1.0-cp312-cp312-manylinux2014_x86_64.whl", b, 500),
            _file("fakepkg-1.0-py3-none-any.whl", other),  # fits, but not a hash of the lock
            _file("fakepkg-1.0.tar.gz", a),  # not a wheel
        ],
        "purepkg": [_file("purepkg-2.0-py3-none-any.whl", c)],
    }
    import platform

    if platform.system() != "Linux" or platform.machine() != "x86_64":
        pytest.skip("the listing's platform wheel is for Linux x86_64")
    chosen = _ondemand.choose(lock, "3.12", files=listing.__getitem__)
    assert [w.filename for w in chosen] == [
        "fakepkg-1.0-cp312-cp312-manylinux2014_x86_64.whl",
        "purepkg-2.0-py3-none-any.whl",
    ]
    assert sum(w.size for w in chosen) == 510


def test_choose_names_a_pin_without_a_fitting_wheel(tmp_path):
    lock = tmp_path / "era.txt"
    lock.write_text(LOCK.format(a="a" * 64, b="b" * 64, c="c" * 64))
    listing = {"fakepkg": [_file("fakepkg-1.0-cp312-cp312-win_amd64.whl", "a" * 64)], "purepkg": []}
    with pytest.raises(ReleaseError, match=r"fakepkg==1\.0 .*fits CPython 3\.12"):
        _ondemand.choose(lock, "3.12", files=listing.__getitem__)


def _served(tmp_path, name: str, body: bytes, digest: str | None = None) -> _ondemand.Wheel:
    source = tmp_path / "index" / name
    source.parent.mkdir(exist_ok=True)
    source.write_bytes(body)
    digest = digest or hashlib.sha256(body).hexdigest()
    return _ondemand.Wheel("p", "1", name, source.as_uri(), len(body), digest)


def test_download_prints_the_size_first_and_checks_every_hash(tmp_path):
    wheel = _served(tmp_path, "p-1-py3-none-any.whl", b"x" * 2_000_000)
    said: list[str] = []
    (path,) = _ondemand.download([wheel], tmp_path / "wheels", "era:test", log=said.append)
    assert path.read_bytes() == b"x" * 2_000_000
    assert said == [
        "casebook: era:test: 1 of 1 wheels to download, 2 MB (once per session; later runs reuse them)"
    ]
    _ondemand.download([wheel], tmp_path / "wheels", "era:test", log=said.append)
    assert said[-1].startswith("casebook: era:test: 0 of 1 wheels to download, 0 MB")
    bad = _served(tmp_path, "q-1-py3-none-any.whl", b"y", digest="0" * 64)
    with pytest.raises(HashMismatch, match="q-1-py3-none-any.whl"):
        _ondemand.download([bad], tmp_path / "wheels", "era:test", log=said.append)
    assert not (tmp_path / "wheels" / bad.filename).exists()


def test_a_missing_release_downloads_on_demand_only(tmp_path, monkeypatch):
    monkeypatch.setenv("CASEBOOK_CACHE", str(tmp_path / "empty"))
    fetched: list[str] = []

    def fake_fetch(specs, **kwargs):
        fetched.extend(specs)
        return []

    monkeypatch.setattr(_manifest, "fetch", fake_fetch)
    monkeypatch.delenv(_ondemand.ON_DEMAND_ENV, raising=False)
    with pytest.raises(ReleaseNotCached, match="python3 -m casebook fetch"):
        _manifest.locate("optax==0.1.9")
    assert fetched == []
    monkeypatch.setenv(_ondemand.ON_DEMAND_ENV, "1")
    with pytest.raises(ReleaseNotCached):  # the fake fetched nothing
        _manifest.locate("optax==0.1.9")
    assert fetched == ["optax==0.1.9"]
