"""Does my optimizer set-up have one of the casebook's bugs?  Find out before it crashes.

:func:`check_optimizer` takes an optax ``GradientTransformation``, the params (and
optionally the grads and the extra keyword arguments of ``update``), and traces
``init`` and ``update`` steps with ``jax.eval_shape``: no compile, no FLOPs.  It steps
until the state's types stop changing, so a drift that shows only at step 3 is found.
It looks for the families of bugs in the book:

1. **State drift** (cases 1 and 4): a state leaf whose dtype, weak type, shape or tree
   structure changes across a step, and the branches of a ``lax.cond`` or ``lax.switch``
   inside ``update`` that disagree on a type.  Such a state breaks ``lax.scan``,
   ``lax.cond``, checkpoint round trips, or costs a retrace.
2. **Non-array leaves that optax touches** (cases 3 and 5): functions, strings or other
   objects in params or grads that ``init`` or ``update`` tries to trace or to do
   arithmetic on, and state that ``init`` built for leaves that get no grads.  Non-array
   leaves that optax never reads are listed as a note only.
3. **Callable data taken for a schedule** (case 2): a hyperparameter of
   ``inject_hyperparams`` that is not a schedule of the step count (a mask, labels or
   dimension numbers, or a callable that returns something other than a number), and
   ``param_labels`` of ``multi_transform``/``partition`` that is a callable pytree.
4. **A state that cannot be donated** (``book/check-findings``, finding 10), with
   ``donate_state=True``: a leaf of ``init``'s state that is the params' own array, or
   an array another leaf holds, which a jitted step that donates the state refuses.

Every argument is checked first: one of the wrong kind is a ``TypeError`` or
``ValueError`` that names the argument and what to pass instead, never an error from
deep inside JAX or NumPy (``tests/test_check_properties.py`` tries generated set-ups).

The result is a :class:`CheckReport`: a list of :class:`Finding`, readable as text and
as an HTML table, with :meth:`CheckReport.raise_if_problems`.  Failures inside the
user's code become findings with the exception's type and first line, not tracebacks.
What the check cannot see: values (a NaN that sticks, a mask that is well typed but
wrong), and anything your training loop does outside ``init`` and ``update``.

The package is one private module per concern, so that each family can be read (and
changed) on its own; everything public is imported here:

* ``_check``: :func:`check_optimizer`, which puts the parts together, and the last pass
  over the report;
* ``_options``: the options (steps, grads_dtype, update_params, ...), validated, and
  whether ``update`` takes params at all;
* ``_inputs``: the trees (params, grads, init_params), validated, the default grads
  filled in, and the notes on what the check assumed (an empty tree, mixed precision,
  an ``update`` without params);
* ``_trees``: pytree helpers (array leaves made abstract, the rest kept) and
  :func:`default_grads`;
* ``_run``: the abstract ``init`` and ``update`` steps, failures turned into findings,
  :data:`MAX_STEPS` and :data:`MAX_EXPLICIT_STEPS`;
* the families (``families.toml``, by key): ``_drift`` (state drift across steps) and
  ``_branches`` (``lax.cond`` branches) for ``drift``, ``_leaves`` for ``leaf``,
  ``_callables`` (and ``_calls``, which calls a mask or labels as optax does) for
  ``callable``, ``_donation`` for ``donation``;
* ``_report``: :class:`Finding`, :class:`CheckReport` and :class:`OptimizerCheckError`.

Examples:
    >>> import jax.numpy as jnp, optax
    >>> from casebook.check import check_optimizer
    >>> check_optimizer(optax.sgd(0.1), {"w": jnp.ones(2)}).ok
    True
"""

from casebook.check import _check, _report, _run
from casebook.check._check import check_optimizer
from casebook.check._report import CheckReport, Finding, OptimizerCheckError
from casebook.check._trees import default_grads

# The names defined elsewhere are bound here with their docstrings, where autodoc reads them
# (book/api.md).
MAX_EXPLICIT_STEPS = _run.MAX_EXPLICIT_STEPS
"""The most steps an explicit ``steps=`` may ask for (a larger number raises)."""
MAX_STEPS = _run.MAX_STEPS
"""The steps ``steps=None`` takes at most, when the state's types never settle."""
Severity = _report.Severity
"""The severity of a finding, ``"error"``, ``"warning"`` or ``"note"``."""
UpdateParams = _check.UpdateParams
"""The values ``check_optimizer(update_params=...)`` takes, ``True``, ``False``, ``"both"``
or ``None``."""

__all__ = [
    "MAX_EXPLICIT_STEPS",
    "MAX_STEPS",
    "CheckReport",
    "Finding",
    "OptimizerCheckError",
    "Severity",
    "UpdateParams",
    "check_optimizer",
    "default_grads",
]
