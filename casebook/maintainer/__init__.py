"""The maintainer's part of casebook: what a clone has and an installed package does not.

The reader's part (``casebook.releases``, ``check``, ``cases``, ``explain``, ``trace``,
``bench``, ``status``) runs the book's cases; this folder keeps the book itself:

* ``sync``: writes everything derived from the case folders (cards, twins, tables, the
  Errors page) and scaffolds a new case (``python3 -m casebook new``);
* ``workshop``: the student and teacher editions, their timing and the plan;
* ``tools``: the commands of a clone (set-up, test, book, bench) and what they need (the
  page records, the executor, the Colab set-up cell, the zh_CN catalogs);
* ``corpus``: the survey of real optimizer set-ups that ``check_optimizer`` is judged on.

``pyproject.toml`` leaves this folder out of the wheel, and ``.importlinter`` keeps the
reader's part from importing it.
"""
