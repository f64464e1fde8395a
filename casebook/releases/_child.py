"""The child program of :func:`casebook.releases.run`: one cell, in a fresh interpreter.

The parent starts ``python -m casebook.releases._child CODE OUT PACKAGES INPUTS NAME`` with
the interpreter of the target's environment and jax configured by the environment variables
(CPU only unless asked otherwise; x64 per run). This program:

* sets the global variables of ``INPUTS`` (a JSON object) and runs the code of the file
  ``CODE`` as ``__main__``, under the file name ``NAME`` so its traceback shows its lines;
* records whether it raised, the exception's type, the names of its classes (so a base
  class matches too), its message and its traceback (without this program's frame);
* records the versions and files of the ``PACKAGES`` (comma-separated) that the code
  *actually imported*, after it ran, so the parent can detect a shadowed release;
* returns ``result`` (a global the code may set) as JSON, arrays as lists, anything else
  that JSON refuses as its ``repr``;
* writes all of it to the file ``OUT``. No file means the process died (the parent then
  reports a crash); the parent's timeout kills a hang.

Standard library only, and nothing at import time but the imports: the code must meet a
process in which nothing of the case (jax, optax, ...) is imported yet.
"""

from __future__ import annotations

import json
import linecache
import os
import sys
import traceback
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def run_cell(
    code: str, cell_name: str, inputs: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run ``code`` as ``__main__`` with ``inputs`` as globals; return (record, namespace).

    An exception is recorded, never raised: ``ok``, ``exc_type``, ``exc_types`` (the
    names along its MRO), ``message`` and ``traceback`` (starting at the cell's frame).
    """
    linecache.cache[cell_name] = (len(code), None, code.splitlines(True), cell_name)
    ns: dict[str, Any] = {"__name__": "__main__"}
    ns.update(inputs)
    rec: dict[str, Any] = {
        "ok": True,
        "exc_type": None,
        "exc_types": [],
        "message": "",
        "traceback": "",
        "frames": [],
    }
    try:
        exec(compile(code, cell_name, "exec"), ns)
    except BaseException as e:  # noqa: BLE001 - a SystemExit or KeyboardInterrupt is an outcome too
        rec.update(exception_record(e))
    sys.stdout.flush()
    sys.stderr.flush()
    return rec, ns


def exception_record(error: BaseException) -> dict[str, Any]:
    """An exception as plain data: ``ok`` (False), ``exc_type``, ``exc_types`` (the names
    along its MRO), ``message``, ``traceback`` and ``frames``, both without the frame of
    the caller that caught it (they start in the code that was run)."""
    tb = error.__traceback__.tb_next if error.__traceback__ is not None else None
    return {
        "ok": False,
        "exc_type": type(error).__name__,
        "exc_types": [c.__name__ for c in type(error).__mro__],
        "message": str(error),
        "traceback": "".join(traceback.format_exception(type(error), error, tb)),
        "frames": frames_of(tb),
    }


def frames_of(tb: Any) -> list[list[Any]]:
    """``[file, lineno, function, source line]`` of each frame of ``tb``, outermost first."""
    return [
        [f.filename, f.lineno or 0, f.name, (f.line or "").strip()]
        for f in traceback.extract_tb(tb)
    ]


def imported_versions(packages: Iterable[str]) -> dict[str, dict[str, str]]:
    """``{name: {"version", "file"}}`` of each of ``packages`` that is imported now."""
    versions = {}
    for name in packages:
        mod = sys.modules.get(name)
        if mod is not None:
            versions[name] = {
                "version": str(getattr(mod, "__version__", "?")),
                "file": str(getattr(mod, "__file__", "")),
            }
    return versions


def _jsonable(o: Any) -> Any:
    tolist = getattr(o, "tolist", None)
    return tolist() if callable(tolist) else repr(o)


def encode(rec: dict[str, Any]) -> str:
    """``rec`` as JSON: arrays (anything with ``tolist``) as lists, other objects as their
    ``repr``; a ``result`` that still will not encode (say, a cycle) becomes its ``repr``."""
    try:
        return json.dumps(rec, default=_jsonable)
    except (TypeError, ValueError):
        return json.dumps({**rec, "result": repr(rec["result"])})


def main(argv: list[str], imported: Callable[[], Iterable[str]] | None = None) -> int:
    """``main([CODE, OUT, PACKAGES, INPUTS, NAME])``: run the cell and write the outcome.

    ``imported`` (from the warm server) names the packages the run imported; without it,
    every one of ``PACKAGES`` that is imported at the end counts, as in a fresh process.
    """
    code_path, out_path, packages, inputs_path, cell_name = argv
    with open(code_path) as f:
        code = f.read()
    with open(inputs_path) as f:
        inputs = json.load(f)
    rec, ns = run_cell(code, cell_name, inputs)
    rec["versions"] = imported_versions(imported() if imported else packages.split(","))
    rec["result"] = ns.get("result")
    payload = encode(rec)
    with open(out_path + ".part", "w") as f:
        f.write(payload)
    os.replace(out_path + ".part", out_path)  # the outcome appears whole or not at all
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
