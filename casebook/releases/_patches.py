"""Releases with one-line fixes applied, and the targets a run can name.

A :class:`PatchedRelease` is a fetched release with :class:`Patch` es (each replaces
exactly one line) applied to a private copy, so a notebook can show that an upstream fix,
back-ported by hand, is what makes a trigger pass. A *target* of a run is a manifest spec
(``"optax==0.1.9"``), a :class:`PatchedRelease`, or :data:`CURRENT` (the installed stack);
:func:`overlay_place` finds the directory that goes first on the child's ``PYTHONPATH``,
and ``str()`` of a target is its name in outcomes and tables.
"""

from __future__ import annotations

import compileall
import dataclasses
import difflib
import hashlib
import shutil
import tempfile
from pathlib import Path

from casebook.releases._manifest import Located, locate, parse_spec, release_dir, resolve
from casebook.releases.errors import PatchError

CURRENT = "current"  # documented where it is public, ``casebook.releases``


@dataclasses.dataclass(frozen=True)
class Patch:
    """Replace one line of one file. ``old`` must match exactly one line (stripped).

    Args:
        path: the file, relative to the release's root (``"optax/_src/wrappers.py"``).
        old: the line to replace, without its indent.
        new: the line that replaces it; it keeps the old line's indent.

    Examples:
        >>> fix = Patch("f.py", "return a + b", "return a - b")
        >>> print(fix.apply("def f(a, b):\\n    return a + b\\n"), end="")
        def f(a, b):
            return a - b
    """

    path: str
    old: str
    new: str

    def apply(self, text: str) -> str:
        """``text`` with the one line equal to ``old`` replaced by ``new`` (indent kept)."""
        lines = text.splitlines(keepends=True)
        hits = [i for i, line in enumerate(lines) if line.strip() == self.old.strip()]
        if len(hits) != 1:
            raise PatchError(
                f"{self.path}: expected exactly one line equal to {self.old.strip()!r}, "
                f"found {len(hits)}"
            )
        i = hits[0]
        indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
        ending = "\n" if lines[i].endswith("\n") else ""
        lines[i] = indent + self.new.strip() + ending
        return "".join(lines)


@dataclasses.dataclass(frozen=True)
class PatchedRelease:
    """A fetched release with one-line patches applied to a private copy of it.

    Made by :func:`patched`; a run names it as its target like a release spec, and its
    ``label`` (``"optax==0.1.9 + fix B"``) names its row in a version table.
    """

    base: str
    patches: tuple[Patch, ...]
    name: str

    @property
    def package(self) -> str:
        return parse_spec(self.base)[0]

    @property
    def label(self) -> str:
        return f"{self.base} + {self.name}"

    def __str__(self) -> str:
        return self.label

    def diff(self) -> str:
        """The patches as a unified diff against the base release (for display)."""
        root = locate(self.base)
        chunks: list[str] = []
        for p in self.patches:
            before = (root / p.path).read_text().splitlines(keepends=True)
            after = p.apply("".join(before)).splitlines(keepends=True)
            chunks.extend(difflib.unified_diff(before, after, f"a/{p.path}", f"b/{p.path}", n=1))
        return "".join(chunks)

    def materialize(self, *, cache: Path | None = None) -> Path:
        """Copy the base release and apply the patches; cached by content hash."""
        if cache is None:
            found = release_dir(self.base)
        else:
            found = Located(resolve(self.base), locate(self.base, cache=Path(cache)), Path(cache))
        src = found.directory
        key = hashlib.sha256(repr((self.base, self.patches)).encode()).hexdigest()[:12]
        name = f"{found.release.package}-{found.release.version}-{key}"
        dst = found.cache / "patched" / name
        if not (dst / ".casebook-done").exists():
            # Build in a private directory, then rename: concurrent runs never see a half copy.
            dst.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=dst.name + ".", dir=dst.parent))
            # The base's bytecode stays behind (a patched file of the same size, written in
            # the second it was unpacked, would pass for it): the copy is compiled anew.
            bytecode = shutil.ignore_patterns("__pycache__")
            shutil.copytree(src, tmp, dirs_exist_ok=True, ignore=bytecode)
            for p in self.patches:
                f = tmp / p.path
                f.write_text(p.apply(f.read_text()))
            compileall.compile_dir(tmp, quiet=2, ddir=str(dst))
            (tmp / ".casebook-done").write_text(self.label)
            try:
                tmp.rename(dst)
            except OSError:  # another process finished first; its copy is identical
                shutil.rmtree(tmp, ignore_errors=True)
        return dst


def patched(base: str, *patches: Patch, name: str) -> PatchedRelease:
    """A release with one-line fixes applied, e.g. an upstream fix back-ported by hand.

    The patch is checked against the base release at once, so a line that does not
    exist fails here, in the cell that defines the fix.

    Args:
        base: the release spec of a fetched release (``"optax==0.1.9"``).
        *patches: the :class:`Patch` es to apply, each replacing one line.
        name: the fix's name, shown after the release (``"optax==0.1.9 + fix B"``).

    Returns:
        The :class:`PatchedRelease`; its copy is made on its first run.

    Raises:
        PatchError: a patch's line is not exactly once in its file.
        ReleaseNotCached: the base release has not been fetched
            (``python3 -m casebook setup``).

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
"""What a run names: a manifest spec, :data:`CURRENT`, or a :class:`PatchedRelease`."""


@dataclasses.dataclass(frozen=True)
class Overlay:
    """Where a non-era target's package comes from: its label, the package it overlays
    (None for the current stack), the directory first on ``PYTHONPATH`` and the cache
    that holds it."""

    label: str
    package: str | None
    directory: Path | None
    cache: Path | None


def overlay_place(target: Target) -> Overlay:
    """The :class:`Overlay` of a target, in one call (locating, or materializing, the
    release, so a missing one fails before any run starts)."""
    if isinstance(target, PatchedRelease):
        directory = target.materialize()
        return Overlay(target.label, target.package, directory, directory.parent.parent)
    if target == CURRENT:
        return Overlay(CURRENT, None, None, None)
    found = release_dir(target)
    return Overlay(str(target), found.release.package, found.directory, found.cache)
