"""The targets a run can name, the manifest of releases, and the environment of each target.

A *target* of a run is :data:`CURRENT` (the installed stack), a release of the manifest
(``"optax==0.1.9"``), a :class:`PatchedRelease` (a release with :class:`Patch` es, each
replacing exactly one line, so a notebook can show that an upstream fix, back-ported by
hand, is what makes a trigger pass) or an era (``"era:optax-828"``); ``str()`` of a target
is its name in outcomes and tables. Every target but the current stack runs in an
environment of its own (:func:`environment`), which :mod:`casebook.releases._envs` builds
with uv from hashed pins. The releases are listed once, with the sha256 of their wheels, in
``manifest.toml``; a release's pins are :func:`requirements`: today's stack as this
interpreter has it (the packages a run reports and what they need, each at its installed
version with the lock's hashes), the release's pin and hash in its package's place. A
patched release's are its base's, the patches applied after.

Standard library only: ``python3 -m casebook setup`` imports this before anything else is
installed.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path

from casebook.lock import GPU_REQUIREMENTS, REQUIREMENTS
from casebook.project import REPORTED, ROOT
from casebook.releases import _envs, eras
from casebook.releases._envs import Patch
from casebook.releases.errors import ReleaseError, UnknownRelease

MANIFEST = Path(__file__).resolve().parent / "manifest.toml"


@dataclasses.dataclass(frozen=True)
class Release:
    """One historical release, pinned by the sha256 of its wheel."""

    package: str
    version: str
    sha256: str
    why: str = ""

    @property
    def spec(self) -> str:
        return f"{self.package}=={self.version}"

    def __str__(self) -> str:
        return self.spec


def load_manifest(path: Path | None = None) -> dict[str, Release]:
    """Read the manifest into ``{"optax==0.1.9": Release, ...}``."""
    path = Path(path or os.environ.get("CASEBOOK_MANIFEST") or MANIFEST)
    with open(path, "rb") as f:
        data = tomllib.load(f)
    releases = {}
    for entry in data.get("release", []):
        rel = Release(**entry)
        if not re.fullmatch(r"[0-9a-f]{64}", rel.sha256):
            raise ValueError(f"{path}: {rel.spec} has a malformed sha256 {rel.sha256!r}")
        releases[rel.spec] = rel
    return releases


def parse_spec(spec: str) -> tuple[str, str]:
    """``"optax==0.1.9"`` -> ``("optax", "0.1.9")``, with a clear error otherwise."""
    m = re.fullmatch(r"\s*([A-Za-z0-9_.-]+)\s*==\s*([A-Za-z0-9_.+-]+)\s*", spec)
    if not m:
        raise UnknownRelease(f"{spec!r} is not a release spec; write it as 'package==version'")
    return m.group(1).lower(), m.group(2)


def resolve(spec: str, manifest: Mapping[str, Release] | None = None) -> Release:
    """The manifest entry for ``spec``, or :class:`UnknownRelease` listing what exists."""
    manifest = load_manifest() if manifest is None else manifest
    package, version = parse_spec(spec)
    key = f"{package}=={version}"
    if key not in manifest:
        known = ", ".join(sorted(manifest)) or "none"
        raise UnknownRelease(
            f"{key} is not in the manifest ({MANIFEST.name}). Known releases: {known}. "
            f"Add it there with its wheel's sha256, then run `{_envs.SETUP_COMMAND}`."
        )
    return manifest[key]


def normal(name: str) -> str:
    """A distribution's name as uv and locks write it (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _required(dist: importlib.metadata.Distribution, extras: bool = False) -> list[str]:
    """The names of what ``dist`` requires (outside its extras, unless ``extras``)."""
    found = (r for r in dist.requires or () if extras or "extra" not in r.partition(";")[2])
    return [normal(re.split(r"[\s;<>=!~\[(]", r, maxsplit=1)[0]) for r in found]


def _lock_hashes() -> dict[str, list[str]]:
    """``{"name==version": ["--hash=sha256:...", ...]}`` of the clone's locks (none in an
    installed ``casebook``)."""
    found = {}
    for lock in (REQUIREMENTS, GPU_REQUIREMENTS):
        for block in re.split(r"\n(?=\S)", lock.read_text() if lock.exists() else ""):
            head = re.match(r"([A-Za-z0-9_.-]+)==([^\s;\\]+)", block)
            if head:
                found[f"{normal(head[1])}=={head[2]}"] = re.findall(r"--hash=\S+", block)
    return found


@functools.cache
def stack(roots: tuple[str, ...] = REPORTED) -> dict[str, str]:
    """``{name: pin}`` of ``roots`` as this interpreter has them, with what they require
    outside their extras: each pinned at its installed version with the hashes of the lock
    that pins it (a clone's ``requirements.txt`` or ``requirements-gpu.txt``; an installed
    ``casebook`` has no lock, and its pins go unhashed). By default, today's stack: what a
    run reports (``REPORTED``) and jax's plugins (a GPU set-up's, with the CUDA libraries
    their extras bring)."""
    entry_points = importlib.metadata.entry_points(group="jax_plugins")
    plugins = {normal(ep.dist.name) for ep in entry_points if ep.dist is not None}
    todo = [*roots, *(plugins if roots == REPORTED else ())]
    hashes = _lock_hashes()
    pins: dict[str, str] = {}
    while todo:
        name = normal(todo.pop())
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # not installed here, so no run here needs it
        if name not in pins:
            pin = f"{name}=={dist.version}"
            pins[name] = " ".join([pin, *hashes.get(pin, ())])
            todo += _required(dist, extras=name in plugins)
    return dict(sorted(pins.items()))


def requirements(rel: Release) -> str:
    """The requirement set of a run on ``rel``: today's :func:`stack`, the release's pin and
    the manifest's hash in place of its package's; last, a comment naming the digest of the
    locks, which pin what a build adds to complete the release (:func:`_completion`), so
    that another lock is another environment."""
    pins = {**stack(), normal(rel.package): f"{rel.spec} --hash=sha256:{rel.sha256}"}
    locks = json.dumps(sorted(_lock_hashes().items())).encode()
    completed = f"# completed from the locks {hashlib.sha256(locks).hexdigest()[:16]}\n"
    return "".join(f"{pin}\n" for pin in pins.values()) + completed


def _completion(site: Path) -> str:
    """The pins of what the distributions in ``site`` require and lack (optax 0.2.3 needs
    etils, which today's stack does not), as this interpreter has them."""
    dists = list(importlib.metadata.distributions(path=[str(site)]))
    missing = {n for d in dists for n in _required(d)} - {normal(d.name) for d in dists}
    return "".join(f"{pin}\n" for pin in stack(tuple(sorted(missing))).values())


CURRENT = "current"  # documented where it is public, ``casebook.releases``


@dataclasses.dataclass(frozen=True)
class PatchedRelease:
    """A release with one-line patches applied, in an environment of its own.

    Made by :func:`patched`; a run names it as its target like a release spec, and its
    ``label`` (``"optax==0.1.9 + fix B"``) names its row in a version table.
    """

    base: str
    patches: tuple[Patch, ...]
    name: str

    @property
    def label(self) -> str:
        return f"{self.base} + {self.name}"

    def __str__(self) -> str:
        return self.label

    def diff(self) -> str:
        """The patches as a unified diff against the base release (for display)."""
        chunks: list[str] = []
        for p in self.patches:
            before = source_file(self.base, p.path).read_text().splitlines(keepends=True)
            after = p.apply("".join(before)).splitlines(keepends=True)
            chunks.extend(difflib.unified_diff(before, after, f"a/{p.path}", f"b/{p.path}", n=1))
        return "".join(chunks)


def patched(base: str, *patches: Patch, name: str) -> PatchedRelease:
    """A release with one-line fixes applied, e.g. an upstream fix back-ported by hand.

    The patch is checked against the base release at once, so a line that does not
    exist fails here, in the cell that defines the fix.

    Args:
        base: the release spec of a release of the manifest (``"optax==0.1.9"``).
        *patches: the :class:`Patch` es to apply, each replacing one line.
        name: the fix's name, shown after the release (``"optax==0.1.9 + fix B"``).

    Returns:
        The :class:`PatchedRelease`; its environment is built on its first run.

    Raises:
        PatchError: a patch's line is not exactly once in its file.
        ReleaseNotCached: the base release's environment is not built and cannot be
            here (``python3 -m casebook setup``).

    Examples:
        Fix B of case 1, back-ported to the release of the report:

        >>> fix_b = patched(
        ...     "optax==0.1.9",
        ...     Patch(
        ...         "optax/_src/wrappers.py",
        ...         "lambda st, nst: (1 - emit) * st + emit * nst,",
        ...         "lambda st, nst: jnp.where(emit, nst, st),",
        ...     ),
        ...     name="fix B",
        ... )
        >>> fix_b.label
        'optax==0.1.9 + fix B'
        >>> print(fix_b.diff())
        --- a/optax/_src/wrappers.py
        +++ b/optax/_src/wrappers.py
        @@ -407,3 +407,3 @@
                  inner_opt_state=jax.tree_util.tree_map(
        -              lambda st, nst: (1 - emit) * st + emit * nst,
        +              lambda st, nst: jnp.where(emit, nst, st),
                       state.inner_opt_state,
        <BLANKLINE>
    """
    rel = PatchedRelease(base=resolve(base).spec, patches=tuple(patches), name=name)
    rel.diff()
    return rel


Target = str | PatchedRelease
"""What a run names: :data:`CURRENT`, a manifest spec, a :class:`PatchedRelease` or an era."""


def environment(target: Target) -> _envs.Env:
    """The environment of a target other than :data:`CURRENT`: an era's lock; a release's
    requirement set (today's stack with the release's pin); a patched release's, its
    base's with the patches. An unknown release or era raises, listing the known ones."""
    if isinstance(target, PatchedRelease):
        base = environment(target.base)
        return dataclasses.replace(base, name=target.label, patches=target.patches)
    if not target.startswith(eras.ERA_PREFIX):
        rel, source = resolve(target), "the manifest and today's stack"
        pins = requirements(rel)
        return _envs.Env(
            rel.spec, _envs.THIS_PYTHON, pins, source, package=rel.package, complete=_completion
        )
    return eras.environment(target)


@functools.cache
def _own_homes() -> dict[str, Path]:
    """Where this interpreter imports each reported package from (the site directory that
    holds it): a run on the current stack must import them from the same places."""
    homes = {}
    for name in REPORTED:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            homes[name] = Path(list(spec.submodule_search_locations)[0]).resolve().parent
    return homes


def place_of(target: Target) -> _envs.Place:
    """Where a run on ``target`` happens, in one call: this interpreter with the clone first
    on the path, for the current stack; otherwise the target's :func:`environment`
    (:func:`casebook.releases._envs.place`), built if it is missing."""
    if target == CURRENT:
        return _envs.Place(CURRENT, sys.executable, (ROOT,), None, _own_homes(), None)
    env = environment(target)
    return _envs.place(env)


def source_file(target: Target, relative: str) -> Path:
    """Path of a file inside a release's (or a patched release's, or an era's) environment,
    e.g. ``optax/_src/wrappers.py``, the environment built first if it is missing."""
    if target == CURRENT:
        raise ReleaseError("source_file() needs a release or a patched release, not 'current'")
    python = _envs.ensure(environment(target))
    path = _envs.site_packages(python.parent.parent) / relative
    if not path.exists():
        raise FileNotFoundError(f"{relative} is not in {target}")
    return path
