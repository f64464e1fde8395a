"""The programs of the variant corpus: each a small program that raises, as a reader's
would (``make.py`` runs them; its docstring says how the corpus is made).

:data:`VARIANTS` maps a name to ``(family, owner, program)``: the family ("drift", "leaf",
"callable", "donation", "transform", or "unrelated" for a traceback the book must not answer) and the owner whose
card must come first (a case key, ``finding-N`` as numbered on book/check-findings, or
``own:lax.API`` where the reader's own loop or branch raised it; "" for unrelated).
"""

from __future__ import annotations

_HEAD = "import jax, jax.numpy as jnp, optax\n"
_EQX = "import equinox as eqx\n"
_BF16 = 'params = {"w": jnp.ones(3, jnp.bfloat16), "b": jnp.zeros(2, jnp.bfloat16)}\n'
_MIXED = 'params = {"w": jnp.ones(3, jnp.bfloat16), "b": jnp.zeros(2, jnp.float32)}\n'
_SCAN = """
state = opt.init(params)
def body(s, _):
    u, s = opt.update(jax.tree.map(jnp.ones_like, params), s, params)
    return s, None
jax.lax.scan(body, state, None, length=3)
"""
_WHILE = """
state = opt.init(params)
def body(c):
    i, s = c
    u, s = opt.update(jax.tree.map(jnp.ones_like, params), s, params)
    return i + 1, s
jax.lax.while_loop(lambda c: c[0] < 3, body, (0, state))
"""
_CKPT = """
import equinox as eqx
state = opt.init(params)
def body(s, _):
    u, s = opt.update(jax.tree.map(jnp.ones_like, params), s, params)
    return s, None
eqx.internal.scan(body, state, None, length=3, kind="checkpointed")
"""
_MLP = "model = eqx.nn.MLP(2, 1, 4, 1, activation={act}, key=jax.random.key(0))\n"

#: name -> (family, owner, program). family: "drift", "leaf", "callable" or "unrelated".
VARIANTS: dict[str, tuple[str, str, str]] = {
    # --- the drift family -------------------------------------------------
    "dog-scan": (
        "drift",
        "finding-2",
        _HEAD + _BF16 + "opt = optax.scale_by_distance_over_gradients()" + _SCAN,
    ),
    "dog-while": (
        "drift",
        "finding-2",
        _HEAD + _BF16 + "opt = optax.scale_by_distance_over_gradients()" + _WHILE,
    ),
    "dog-eqx-checkpointed": (
        "drift",
        "finding-2",
        _HEAD + _BF16 + "opt = optax.scale_by_distance_over_gradients()" + _CKPT,
    ),
    "prodigy-scan": (
        "drift",
        "finding-5",
        _HEAD + _MIXED + "opt = optax.contrib.prodigy()" + _SCAN,
    ),
    "prodigy-while": (
        "drift",
        "finding-5",
        _HEAD + _MIXED + "opt = optax.contrib.prodigy()" + _WHILE,
    ),
    "dadapt-scan": (
        "drift",
        "finding-5",
        _HEAD + _MIXED + "opt = optax.contrib.dadapt_adamw()" + _SCAN,
    ),
    "momo-scan": (
        "drift",
        "finding-5",
        _HEAD
        + _MIXED
        + "opt = optax.contrib.momo()"
        + _SCAN.replace("s, params)", "s, params, value=jnp.ones((), jnp.bfloat16))"),
    ),
    "inject-f32-scan": (
        "drift",
        "finding-3",
        _HEAD
        + _BF16
        + "opt = optax.inject_hyperparams(optax.adamw, hyperparam_dtype=jnp.float32)(1e-3)"
        + _SCAN,
    ),
    "inject-f32-checkpointed": (
        "drift",
        "finding-3",
        _HEAD
        + _BF16
        + "opt = optax.inject_hyperparams(optax.adam, hyperparam_dtype=jnp.float32)(1e-3)"
        + _CKPT,
    ),
    "apply-if-finite-bf16": (
        "drift",
        "finding-9",
        _HEAD
        + """
params = {"w": jnp.ones((3, 3))}
opt = optax.apply_if_finite(optax.adam(1e-3), max_consecutive_errors=2)
state = opt.init(params)
grads = {"w": jnp.ones((3, 3), jnp.bfloat16)}
jax.jit(opt.update)(grads, state, params)
""",
    ),
    "monitor-scan": (
        "drift",
        "finding-1",
        _HEAD
        + """
params = {"w": jnp.ones(3)}
opt = optax.chain(optax.adam(1e-3), optax.monitor({"norm": lambda u: optax.tree.norm(u)}))
"""
        + _SCAN,
    ),
    "lbfgs-x64-fori": (
        "drift",
        "optax-1210",
        """
import jax
jax.config.update("jax_enable_x64", False)
import jax.numpy as jnp, optax, numpy as np
params = jnp.ones(3)
opt = optax.lbfgs()
saved = jax.tree.map(np.asarray, opt.init(params))
jax.config.update("jax_enable_x64", True)
params = jnp.ones(3)
state = jax.tree.map(jnp.asarray, saved)
f = lambda p: jnp.sum(p ** 2)
def body(i, s):
    v, g = jax.value_and_grad(f)(params)
    u, s = opt.update(g, s, params, value=v, grad=g, value_fn=f)
    return s
jax.lax.fori_loop(0, 3, body, state)
""",
    ),
    "lbfgs-x64-while": (
        "drift",
        "optax-1210",
        """
import jax
jax.config.update("jax_enable_x64", False)
import jax.numpy as jnp, optax, numpy as np
params = jnp.ones(3)
opt = optax.lbfgs()
saved = jax.tree.map(np.asarray, opt.init(params))
jax.config.update("jax_enable_x64", True)
params = jnp.ones(3)
state = jax.tree.map(jnp.asarray, saved)
f = lambda p: jnp.sum(p ** 2)
def body(c):
    i, s = c
    v, g = jax.value_and_grad(f)(params)
    u, s = opt.update(g, s, params, value=v, grad=g, value_fn=f)
    return i + 1, s
jax.lax.while_loop(lambda c: c[0] < 3, body, (0, state))
""",
    ),
    "conditionally-mask-bf16": (
        "drift",
        "finding-9",
        _HEAD
        + """
params = {"w": jnp.ones((3, 3))}
opt = optax.conditionally_mask(optax.adam(1e-3), lambda step: step > 0)
state = opt.init(params)
jax.jit(opt.update)({"w": jnp.ones((3, 3), jnp.bfloat16)}, state, params)
""",
    ),
    "own-cond": (
        "drift",
        "own:lax.cond",
        """
import jax, jax.numpy as jnp
def step(x):
    return jax.lax.cond(x.sum() > 0, lambda x: x.astype(jnp.float16), lambda x: x, x)
step(jnp.ones(3))
""",
    ),
    "own-scan": (
        "drift",
        "own:lax.scan",
        """
import jax, jax.numpy as jnp
def body(c, x):
    return c * x, None
jax.lax.scan(body, jnp.zeros((), jnp.int32), jnp.ones(4))
""",
    ),
    "own-switch": (
        "drift",
        "own:lax.switch",
        """
import jax, jax.numpy as jnp
def f(i, x):
    return jax.lax.switch(i, [lambda x: x, lambda x: x.astype(jnp.bfloat16)], x)
f(1, jnp.ones(2))
""",
    ),
    "own-while": (
        "drift",
        "own:lax.while_loop",
        """
import jax, jax.numpy as jnp
jax.lax.while_loop(lambda c: c < 3, lambda c: c + 0.5, jnp.int32(0))
""",
    ),
    # --- the leaf family -----------------------------------------
    "adam-init-lambda": (
        "leaf",
        "diffrax-521",
        _HEAD
        + """
params = {"w": jnp.ones(3), "act": lambda x: x}
optax.adam(1e-3).init(params)
""",
    ),
    "adam-init-jitted": (
        "leaf",
        "diffrax-521",
        _HEAD
        + """
params = {"w": jnp.ones(3), "act": jax.jit(jnp.tanh)}
optax.adam(1e-3).init(params)
""",
    ),
    "sgd-init-mlp-relu": (
        "leaf",
        "optax-1017",
        _HEAD
        + _EQX
        + _MLP.format(act="jax.nn.relu")
        + """
optax.sgd(0.1, momentum=0.9).init(model)
""",
    ),
    "jit-update-whole-model": (
        "leaf",
        "diffrax-521",
        _HEAD
        + _EQX
        + _MLP.format(act="jnp.tanh")
        + """
opt = optax.adamw(1e-3)
state = opt.init(eqx.filter(model, eqx.is_array))
grads = eqx.filter(model, eqx.is_array)
jax.jit(opt.update)(grads, state, model)
""",
    ),
    "multisteps-filter-jit": (
        "leaf",
        "diffrax-521",
        _HEAD
        + _EQX
        + _MLP.format(act="jax.nn.gelu")
        + """
opt = optax.MultiSteps(optax.adam(1e-3), every_k_schedule=2)
state = opt.init(eqx.filter(model, eqx.is_array))
grads = eqx.filter(model, eqx.is_array)
eqx.filter_jit(opt.update)(grads, state, model)
""",
    ),
    "apply-updates-activation": (
        "leaf",
        "optax-1017",
        _HEAD
        + _EQX
        + _MLP.format(act="jax.nn.softplus")
        + """
updates = jax.tree.map(lambda x: x, model)
optax.apply_updates(model, updates)
""",
    ),
    "tree-zeros-like-model": (
        "leaf",
        "diffrax-521",
        _HEAD
        + _EQX
        + _MLP.format(act="jax.nn.silu")
        + """
optax.tree.zeros_like(model)
""",
    ),
    "lbfgs-whole-model-update": (
        "leaf",
        "optax-1017",
        _HEAD
        + _EQX
        + _MLP.format(act="jax.nn.relu")
        + """
params, static = eqx.partition(model, eqx.is_array)
opt = optax.lbfgs()
state = opt.init(params)
f = lambda m: jnp.sum(m(jnp.ones(2)) ** 2)
v, g = eqx.filter_value_and_grad(f)(model)
opt.update(g, state, model, value=v, grad=g, value_fn=f)
""",
    ),
    "lbfgs-value-fn-linesearch": (
        "leaf",
        "optax-1017",
        _HEAD
        + _EQX
        + _MLP.format(act="jax.nn.relu")
        + """
params, static = eqx.partition(model, eqx.is_array)
loss = lambda m: jnp.sum(m(jnp.ones(2)) ** 2)
opt = optax.lbfgs()
state = opt.init(params)
v, g = eqx.filter_value_and_grad(loss)(model)
opt.update(g, state, params, value=v, grad=g, value_fn=loss)
""",
    ),
    "adamw-string-leaf": (
        "leaf",
        "diffrax-521",
        _HEAD
        + """
params = {"w": jnp.ones(3), "name": "encoder"}
opt = optax.adamw(1e-3)
opt.init(params)
""",
    ),
    "pid-controller-adam": (
        "leaf",
        "diffrax-521",
        _HEAD
        + _EQX
        + """
import diffrax
class Model(eqx.Module):
    w: jax.Array
    controller: diffrax.PIDController
model = Model(jnp.ones(3), diffrax.PIDController(rtol=1e-3, atol=1e-6))
opt = optax.adam(1e-3)
opt.init(model)
""",
    ),
    "lion-update-jit-method": (
        "leaf",
        "diffrax-521",
        _HEAD
        + _EQX
        + """
class Net(eqx.Module):
    w: jax.Array
    norm: object
net = Net(jnp.ones(3), jnp.linalg.norm)
opt = optax.lion(1e-4)
state = opt.init(eqx.filter(net, eqx.is_array))
jax.jit(opt.update)(eqx.filter(net, eqx.is_array), state, net)
""",
    ),
    # --- the callable family ----------------------------------------------------
    "inject-lion-mask-module": (
        "callable",
        "optax-1373",
        _HEAD
        + _EQX
        + """
class Mask(eqx.Module):
    w: bool
    b: bool
    def __call__(self, x, y):
        return x
params = {"w": jnp.ones(3), "b": jnp.ones(3)}
mask = {"w": True, "b": False}
class Tree(eqx.Module):
    w: jax.Array
    b: jax.Array
    def __call__(self, x, key):
        return x
p = Tree(jnp.ones(3), jnp.ones(3))
opt = optax.inject_hyperparams(optax.lion)(learning_rate=1e-4, mask=Tree(True, False))
opt.init(p)
""",
    ),
    "partition-labels-module": (
        "callable",
        "optax-1373",
        _HEAD
        + _EQX
        + """
class Labels(eqx.Module):
    w: str
    b: str
    def __call__(self, x, y):
        return x
class Tree(eqx.Module):
    w: jax.Array
    b: jax.Array
p = Tree(jnp.ones(3), jnp.ones(3))
opt = optax.partition({"a": optax.adam(1e-3), "f": optax.set_to_zero()}, Labels("a", "f"))
opt.init(p)
""",
    ),
    "inject-adamw-mask-jit": (
        "callable",
        "optax-1373",
        _HEAD
        + _EQX
        + """
class Tree(eqx.Module):
    w: jax.Array
    b: jax.Array
    def __call__(self, x):
        return Tree(x.w > 0, x.b > 0)
p = Tree(jnp.ones(3), jnp.ones(3))
opt = optax.inject_hyperparams(optax.adamw)(learning_rate=1e-3, mask=Tree(True, False))
state = opt.init(p)
jax.jit(opt.update)(p, state, p)
""",
    ),
    "inject-sgd-lr-module": (
        "callable",
        "optax-1373",
        _HEAD
        + _EQX
        + """
class Decay(eqx.Module):
    rate: float
    def __call__(self, step, total):
        return self.rate
opt = optax.inject_hyperparams(optax.sgd)(learning_rate=Decay(0.1))
opt.init({"w": jnp.ones(3)})
""",
    ),
    # --- the transform family: a bug of jax 0.6.0, fixed today, so its variants are made
    # on the case's era (`.casebook-cache/envs/era-optimistix-129-KEY/bin/python make.py NAME`) ---
    "optimistix-fixed-point-grad-vmap": (
        "transform",
        "optimistix-129",
        "import jax, jax.numpy as jnp, optimistix as optx\n"
        "def fixed(c):\n"
        "    solver = optx.FixedPointIteration(rtol=1e-6, atol=1e-6)\n"
        "    f = lambda y, c: jnp.cos(y) * c\n"
        "    return optx.fixed_point(f, solver, jnp.array(0.5), args=c).value\n"
        "jax.grad(lambda c: jax.vmap(fixed)(c).sum())(jnp.linspace(0.1, 0.5, 5))\n",
    ),
    # --- unrelated: other libraries, plain Python, JAX errors of other kinds ---------------
    "py-zero-division": ("unrelated", "", "x = 0\nprint(1 / x)\n"),
    "py-key-error": ("unrelated", "", "config = {'lr': 1}\nconfig['learning_rate']\n"),
    "py-json": ("unrelated", "", "import json\njson.loads('{not json')\n"),
    "py-import": ("unrelated", "", "import torchvision_is_not_installed\n"),
    "numpy-broadcast": ("unrelated", "", "import numpy as np\nnp.ones(3) + np.ones(4)\n"),
    "numpy-linalg": ("unrelated", "", "import numpy as np\nnp.linalg.inv(np.zeros((2, 2)))\n"),
    "jax-dot-shapes": (
        "unrelated",
        "",
        "import jax.numpy as jnp\njnp.dot(jnp.ones((2, 3)), jnp.ones((2, 3)))\n",
    ),
    "jax-concretization": (
        "unrelated",
        "",
        """
import jax, jax.numpy as jnp
@jax.jit
def f(x):
    if x.sum() > 0:
        return x
    return -x
f(jnp.ones(3))
""",
    ),
    "jax-add-string": ("unrelated", "", "import jax.numpy as jnp\njnp.add(jnp.ones(2), 'a')\n"),
    "jax-reshape": ("unrelated", "", "import jax.numpy as jnp\njnp.ones(6).reshape(4, 2)\n"),
    "jax-grad-int": ("unrelated", "", "import jax\njax.grad(lambda x: x * 2)(3)\n"),
    "optax-shape-mismatch": (
        "unrelated",
        "",
        _HEAD
        + """
opt = optax.adam(1e-3)
state = opt.init({"w": jnp.ones(3)})
opt.update({"w": jnp.ones(4)}, state)
""",
    ),
}

#: Written after the signatures were tuned on the rest, and first measured untouched (the
#: held-out figures of the report of issue 33).
HELD_OUT: dict[str, tuple[str, str, str]] = {
    "dowg-scan": ("drift", "finding-5", _HEAD + _MIXED + "opt = optax.contrib.dowg()" + _SCAN),
    "mechanize-scan": (
        "drift",
        "finding-5",
        _HEAD + _MIXED + "opt = optax.contrib.mechanize(optax.adam(1e-3))" + _SCAN,
    ),
    "adam-jit-init-sigmoid": (
        "leaf",
        "diffrax-521",
        _HEAD
        + """
params = {"w": jnp.ones(3), "act": jax.nn.sigmoid}
jax.jit(optax.adam(1e-3).init)(params)
""",
    ),
    "masked-module": (
        "callable",
        "optax-1373",
        _HEAD
        + _EQX
        + """
class Mask(eqx.Module):
    w: bool
    b: bool
    def __call__(self, x, y):
        return x
p = {"w": jnp.ones(3), "b": jnp.ones(3)}
opt = optax.masked(optax.adam(1e-3), Mask(True, False))
opt.init(p)
""",
    ),
    "own-fori": (
        "drift",
        "own:lax.fori_loop",
        """
import jax, jax.numpy as jnp
jax.lax.fori_loop(0, 3, lambda i, c: c / 2, jnp.int32(8))
""",
    ),
    "eqx-frozen-field": (
        "unrelated",
        "",
        _EQX
        + """
import jax.numpy as jnp
class M(eqx.Module):
    w: jnp.ndarray
m = M(jnp.ones(2))
m.w = jnp.zeros(2)
""",
    ),
    "eqx-linear-shape": (
        "unrelated",
        "",
        _EQX
        + """
import jax, jax.numpy as jnp
layer = eqx.nn.Linear(3, 2, key=jax.random.key(0))
layer(jnp.ones(4))
""",
    ),
    "py-index": ("unrelated", "", "steps = [1, 2, 3]\nsteps[5]\n"),
}
VARIANTS.update(HELD_OUT)

# --- the donation family (check-findings §10) ---------------
_DONATE = """
params, grads = {"w": jnp.ones((3, 3))}, {"w": jnp.full((3, 3), 0.5)}
def train_step(params, opt_state, grads):
    updates, opt_state = opt.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state
"""
DONATION: dict[str, tuple[str, str, str]] = {
    "prodigy-donated-state": (
        "donation",
        "finding-10",
        _HEAD
        + "opt = optax.contrib.prodigy()"
        + _DONATE
        + "step = jax.jit(train_step, donate_argnums=1)\n"
        + "step(params, opt.init(params), grads)\n",
    ),
    "cocob-donated-state": (
        "donation",
        "finding-10",
        _HEAD
        + "opt = optax.contrib.cocob()"
        + _DONATE
        + "step = jax.jit(train_step, donate_argnums=1)\n"
        + "step(params, opt.init(params), grads)\n",
    ),
    "mechanize-donated-train-state": (
        "donation",
        "finding-10",
        _HEAD
        + "opt = optax.contrib.mechanize(optax.adam(1e-3))"
        + _DONATE
        + "step = jax.jit(train_step, donate_argnums=(0, 1))\n"
        + "step(params, opt.init(params), grads)\n",
    ),
    "dog-donated-state": (
        "donation",
        "finding-10",
        _HEAD
        + "opt = optax.contrib.dog()"
        + _DONATE
        + "step = jax.jit(lambda g, s, p: opt.update(g, s, p), donate_argnums=1)\n"
        + "step(grads, opt.init(params), params)\n",
    ),
}
VARIANTS.update(DONATION)

# --- a loss in another dtype than the params (check-findings §11) ---------------
_LOSS = "loss = lambda p: jnp.sum(jnp.square(p['w'].astype(jnp.float32))).astype({dtype})\n"
VALUE_DTYPE: dict[str, tuple[str, str, str]] = {
    "backtracking-store-grad-x64": (
        "drift",
        "finding-11",
        _HEAD
        + "jax.config.update('jax_enable_x64', True)\n"
        + "params = {'w': jnp.ones(3, jnp.float32)}\n"
        + _LOSS.format(dtype="jnp.float32")
        + "opt = optax.chain(optax.sgd(1.0), optax.scale_by_backtracking_linesearch(15, store_grad=True))\n"
        + "value, grad = jax.value_and_grad(loss)(params)\n"
        + "opt.update(grad, opt.init(params), params, value=value, grad=grad, value_fn=loss)\n",
    ),
    "lbfgs-value-and-grad-from-state-bf16": (
        "drift",
        "finding-11",
        _HEAD
        + "params = {'w': jnp.ones(3, jnp.bfloat16)}\n"
        + _LOSS.format(dtype="jnp.float32")
        + "opt = optax.lbfgs()\n"
        + "value, grad = optax.value_and_grad_from_state(loss)(params, state=opt.init(params))\n",
    ),
    "zoom-value-and-grad-from-state-bf16-loss": (
        "drift",
        "finding-11",
        _HEAD
        + "params = {'w': jnp.ones(3)}\n"
        + _LOSS.format(dtype="jnp.bfloat16")
        + "opt = optax.chain(optax.sgd(1.0), optax.scale_by_zoom_linesearch(15))\n"
        + "value_and_grad = optax.value_and_grad_from_state(loss)\n"
        + "state = opt.init(params)\n"
        + "value, grad = value_and_grad(params, state=state)\n",
    ),
}
VARIANTS.update(VALUE_DTYPE)

from blind import BLIND  # noqa: E402  (issue 51: written blind, its module says how)

VARIANTS.update(BLIND)
