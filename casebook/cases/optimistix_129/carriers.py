"""Case 9 (optimistix#129): which custom JVP rule hands a symbolic zero to ``vmap``'s
batching rule, and what comes back out of it, on one stack.

The set-up wraps two things of jax (whether or not equinox, optimistix and diffrax are
imported already: the book's warm runner imports them first):

* ``jax.custom_jvp.__call__``: the first call of a custom JVP whose rule was registered with
  ``symbolic_zeros=True`` wraps that rule, so that, when it runs, it logs its own name
  (``module.qualname``, and the function an equinox wrapper closes over) and, for each output
  tangent that is a ``SymbolicZero``, its path and abstract value;
* jax's batching helper for the tangents of a batched custom JVP, where jax 0.6.0 rebuilds
  a symbolic zero that changes batch axis (``_matchaxis_symzeros``, which jax 0.5.3 lacks):
  each call that changes the axis logs the class that went in and the class that came out.

Each trigger variant runs one program of the page and files the log under its name, raising
or not; the last variant returns the logs, with the jax version under ``"jax"`` and the other
libraries' under ``"versions"`` (a run reports only the packages the book watches).
"""

from typing import Any

import jax
import jax.numpy as jnp

from casebook.releases.program import variant

LOG: list[dict] = []
LOGS: dict[str, list[dict]] = {}
_call = jax.custom_jvp.__call__


def _logged_rule(rule):
    name = f"{rule.__module__}.{rule.__qualname__}"
    inner = [cell.cell_contents for cell in rule.__closure__ or ()]
    inner = [f.__qualname__ for f in inner if callable(f) and hasattr(f, "__qualname__")]
    name += f" ({inner[0]})" if inner else ""

    def logged(*args):  # (nondiff args, ) primals, tangents
        out = rule(*args)
        leaves = jax.tree_util.tree_leaves_with_path(out[1])
        zeros = [
            f"{jax.tree_util.keystr(path)}: {leaf.aval.str_short()}"
            for path, leaf in leaves
            if type(leaf).__name__ == "SymbolicZero"
        ]
        LOG.append({"rule": name, "symbolic zeros out": zeros})
        return out

    logged.logged = True
    return logged


def _call_logged(self, *args, **kwargs):
    if self.symbolic_zeros and self.jvp is not None and not hasattr(self.jvp, "logged"):
        self.jvp = _logged_rule(self.jvp)
    return _call(self, *args, **kwargs)


jax.custom_jvp.__call__ = _call_logged  # type: ignore[method-assign]

try:
    from jax._src.interpreters import batching

    _match: Any = batching._matchaxis_symzeros
except AttributeError:  # jax 0.5.3 and older: symbolic zeros were instantiated
    _match = None

if _match is not None:

    def _match_logged(*args, **kwargs):
        x = args[-1]  # the tangent; the other arguments (axes, sizes) differ between releases
        out = _match(*args, **kwargs)
        if out is not x and type(x).__name__ in ("Zero", "SymbolicZero"):  # rebuilt: axis moved
            LOG.append(
                {"in": type(x).__name__, "out": type(out).__name__, "aval": out.aval.str_short()}
            )
        return out

    batching._matchaxis_symzeros = _match_logged

import diffrax  # noqa: E402
import optimistix as optx  # noqa: E402

A = jnp.array([1.0, 8.0, 27.0])


def cube_root(a):
    """Newton's method on y**3 = a, from 1."""
    sol = optx.root_find(lambda y, a: y**3 - a, optx.Newton(1e-6, 1e-6), 1.0, args=a)
    return sol.value


def decayed(k):
    """y(1) of dy/dt = -k y, y(0) = 1, with an adaptive step (PIDController)."""
    term = diffrax.ODETerm(lambda t, y, k: -k * y)
    pid = diffrax.PIDController(rtol=1e-5, atol=1e-5)
    sol = diffrax.diffeqsolve(
        term, diffrax.Tsit5(), 0.0, 1.0, 0.1, 1.0, args=k, stepsize_controller=pid
    )
    return sol.ys[-1]


@jax.custom_jvp
def plus_one(x):
    return x + 1


def _plus_one_jvp(primals, tangents):
    (x,) = primals
    return plus_one(x), jax.custom_derivatives.zero_from_primal(x, symbolic_zeros=True)


plus_one.defjvp(_plus_one_jvp, symbolic_zeros=True)


def _logged(name, program):
    LOG.clear()
    try:
        return program()
    finally:
        LOGS[name] = list(LOG)


@variant("optimistix: grad(vmap(root_find))")
def optimistix_grad_vmap():
    return _logged(
        "optimistix", lambda: jax.grad(lambda a: jax.vmap(cube_root)(a).sum())(A).tolist()
    )


@variant("optimistix: grad(root_find)")
def optimistix_grad():
    return _logged("optimistix, grad", lambda: [float(jax.grad(cube_root)(a)) for a in A])


@variant("optimistix: vmap(grad(root_find))")
def optimistix_vmap_grad():
    return _logged("optimistix, vmap(grad)", lambda: jax.vmap(jax.grad(cube_root))(A).tolist())


@variant("diffrax: grad(vmap(diffeqsolve))")
def diffrax_grad_vmap():
    return _logged(
        "diffrax", lambda: jax.grad(lambda k: jax.vmap(decayed)(k).sum())(A / 10).tolist()
    )


@variant("diffrax: constant step")
def diffrax_constant_step():
    term = diffrax.ODETerm(lambda t, y, k: -k * y)

    def constant(k):
        return diffrax.diffeqsolve(term, diffrax.Tsit5(), 0.0, 1.0, 0.1, 1.0, args=k).ys[-1]

    return _logged(
        "diffrax, constant step",
        lambda: jax.grad(lambda k: jax.vmap(constant)(k).sum())(A / 10).tolist(),
    )


@variant("jax: jvp(vmap(jit(custom_jvp)))")
def pure_jax():
    x = jnp.arange(3.0)
    return _logged(
        "plain jax", lambda: jax.jvp(jax.vmap(jax.jit(plus_one)), (x,), (x,))[1].tolist()
    )


@variant("logs")
def logs():
    import importlib.metadata as metadata

    names = ("jaxlib", "equinox", "optimistix", "lineax", "diffrax")
    return {"jax": jax.__version__, "versions": {n: metadata.version(n) for n in names}, **LOGS}
