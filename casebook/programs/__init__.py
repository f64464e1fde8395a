"""Programs that run on historical releases: one module per experiment of a case.

Each module is the set-up at its top level and a few ``@variant`` functions (see
:mod:`casebook.releases.program`). They are run by
:func:`casebook.releases.variants.program_table` in a child process with the release
first on the path, never imported by the book's kernel, and they are written against
the API of the releases they run on (so mypy does not check them against today's).
"""
