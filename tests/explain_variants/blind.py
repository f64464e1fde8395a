"""The blind held-out set of issue 51: 49 programs written by a reviewer from one paragraph
per family and a one-line description per case and finding, without reading
``families.toml``, the signatures, the ranking, this corpus or the Errors page, each checked
to raise on today's stack. Labels are the reviewer's, except two: the x64 ``lbfgs`` programs
fail in ``value_and_grad_from_state``'s cond (a loss in another dtype than the params), which
is finding 11's mechanism, not case 4's scan carry, so they are labelled finding-11 (the
reviewer flagged both). ``explain`` was measured on them before its ranking changed (the
figures are in ``tests/test_explain_variants.py``).
"""

BLIND: dict[str, tuple[str, str, str]] = {
    "blind-drift-apply-if-finite-bf16-grads": (
        "drift",
        "finding-9",
        """
import jax, jax.numpy as jnp, optax

params = {"w": jnp.ones((3, 3), jnp.float32), "b": jnp.zeros((3,), jnp.float32)}
opt = optax.apply_if_finite(optax.adamw(1e-3, weight_decay=1e-4), max_consecutive_errors=3)
opt_state = opt.init(params)

def compute_grads(params, x):
    # mixed-precision backward pass: cast params to bf16 for compute
    p16 = jax.tree.map(lambda a: a.astype(jnp.bfloat16), params)
    def loss(p):
        return jnp.sum(jnp.tanh(x.astype(jnp.bfloat16) @ p["w"] + p["b"]))
    return jax.grad(loss)(p16)

@jax.jit
def train_step(params, opt_state, x):
    grads = compute_grads(params, x)
    updates, opt_state = opt.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state

params, opt_state = train_step(params, opt_state, jnp.ones((2, 3)))
print(params)
""",
    ),
    "blind-drift-backtracking-store-grad-bf16": (
        "drift",
        "finding-11",
        """
import jax, jax.numpy as jnp, optax

X = jax.random.normal(jax.random.PRNGKey(0), (32, 4))
y = X @ jnp.array([1.0, -2.0, 0.5, 3.0])

def loss_bf16(w):
    pred = (X.astype(jnp.bfloat16) @ w.astype(jnp.bfloat16))
    return jnp.mean((pred - y.astype(jnp.bfloat16)) ** 2)

solver = optax.chain(
    optax.sgd(learning_rate=1.0),
    optax.scale_by_backtracking_linesearch(max_backtracking_steps=15, store_grad=True),
)
value_and_grad = optax.value_and_grad_from_state(loss_bf16)

@jax.jit
def step(w, state):
    value, grad = value_and_grad(w, state=state)
    updates, state = solver.update(grad, state, w, value=value, grad=grad, value_fn=loss_bf16)
    return optax.apply_updates(w, updates), state

w = jnp.zeros(4)
state = solver.init(w)
for _ in range(5):
    w, state = step(w, state)
print(w)
""",
    ),
    "blind-drift-backtracking-store-grad-f16-plain-vag": (
        "drift",
        "finding-11",
        """
import jax, jax.numpy as jnp, optax

def make_loss(data):
    def half_precision_loss(params):
        logits = data.astype(jnp.float16) @ params["w"].astype(jnp.float16) + params["b"].astype(jnp.float16)
        return jnp.mean(jax.nn.softplus(-logits))
    return half_precision_loss

loss = make_loss(jnp.ones((16, 5)))
opt = optax.chain(
    optax.scale_by_adam(),
    optax.scale_by_backtracking_linesearch(max_backtracking_steps=20, store_grad=True),
    optax.scale(-1.0),
)
params = {"w": jnp.zeros((5,)), "b": jnp.zeros(())}
state = opt.init(params)

@jax.jit
def train_step(params, state):
    value, grads = jax.value_and_grad(loss)(params)
    updates, state = opt.update(grads, state, params, value=value, grad=grads, value_fn=loss)
    return optax.apply_updates(params, updates), state, value

params, state, value = train_step(params, state)
print(value)
""",
    ),
    "blind-drift-closure-convert-python-float": (
        "drift",
        "equinox-854",
        """
import jax, jax.numpy as jnp, equinox as eqx

def make_residual(scale):
    def residual(y, t):
        return scale * jnp.sin(y) - t * y
    return residual

@jax.jit
def integrate(y0, scale, t1):
    # convert once with a "representative" time, then reuse inside the loop
    fn = eqx.filter_closure_convert(make_residual(scale), y0, 0.0)
    y, t = y0, 0.0
    dt = t1 / 4
    for _ in range(4):
        y = y + dt * fn(y, t)
        t = t + dt
    return y

print(integrate(jnp.ones(3), jnp.float32(2.0), 1.0))
""",
    ),
    "blind-drift-dog-distance-bf16-scan": (
        "drift",
        "finding-2",
        """
import jax, jax.numpy as jnp, optax

W = jax.random.normal(jax.random.PRNGKey(1), (4, 4)).astype(jnp.bfloat16)

def objective(w):
    return jnp.sum((W @ w - 1.0) ** 2).astype(jnp.float32)

tx = optax.chain(optax.scale_by_distance_over_gradients(), optax.scale(-1.0))

def optimize(w, num_iters=50):
    def one_iter(carry, _):
        w, s = carry
        g = jax.grad(objective)(w)
        u, s = tx.update(g, s, w)
        return (optax.apply_updates(w, u), s), objective(w)
    (w, s), trace = jax.lax.scan(one_iter, (w, tx.init(w)), length=num_iters)
    return w, trace

w0 = jnp.ones((4,), dtype=jnp.bfloat16)
w, trace = optimize(w0)
print(trace[-1])
""",
    ),
    "blind-drift-inject-adamw-bf16-fori": (
        "drift",
        "finding-3",
        """
import jax, jax.numpy as jnp, optax

class Cfg:
    lr = 1e-3
    wd = 0.01
    steps = 10

def init_params(key):
    k1, k2 = jax.random.split(key)
    return {
        "dense": {"kernel": jax.random.normal(k1, (8, 8), jnp.bfloat16), "bias": jnp.zeros((8,), jnp.bfloat16)},
        "head": {"kernel": jax.random.normal(k2, (8, 1), jnp.bfloat16)},
    }

def forward(params, x):
    h = jax.nn.gelu(x @ params["dense"]["kernel"] + params["dense"]["bias"])
    return h @ params["head"]["kernel"]

def loss_fn(params, x, y):
    return jnp.mean((forward(params, x) - y).astype(jnp.float32) ** 2)

opt = optax.inject_hyperparams(optax.adamw, hyperparam_dtype=jnp.float32)(
    learning_rate=Cfg.lr, weight_decay=Cfg.wd)

@jax.jit
def fit(params, x, y):
    def body(i, carry):
        params, opt_state = carry
        grads = jax.grad(loss_fn)(params, x, y)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state
    return jax.lax.fori_loop(0, Cfg.steps, body, (params, opt.init(params)))

params = init_params(jax.random.PRNGKey(0))
x = jnp.ones((32, 8), jnp.bfloat16); y = jnp.zeros((32, 1), jnp.bfloat16)
params, _ = fit(params, x, y)
print(loss_fn(params, x, y))
""",
    ),
    "blind-drift-inject-lion-bf16-scan": (
        "drift",
        "finding-3",
        """
import functools
import jax, jax.numpy as jnp, optax

make_opt = functools.partial(optax.inject_hyperparams(optax.lion, hyperparam_dtype=jnp.float32),
                             learning_rate=1e-4, weight_decay=1e-2)
opt = make_opt()

def loss(params, tokens):
    emb = params["emb"][tokens]
    return jnp.mean(jnp.square(emb @ params["out"]).astype(jnp.float32))

@jax.jit
def train(params, batches):
    def one(carry, tokens):
        params, state = carry
        g = jax.grad(loss)(params, tokens)
        u, state = opt.update(g, state, params)
        return (optax.apply_updates(params, u), state), None
    (params, _), _ = jax.lax.scan(one, (params, opt.init(params)), batches)
    return params

params = {"emb": jnp.ones((50, 8), jnp.bfloat16), "out": jnp.ones((8, 50), jnp.bfloat16)}
params = train(params, jnp.zeros((4, 16), jnp.int32))
""",
    ),
    "blind-drift-lbfgs-bf16-loss-value-from-state": (
        "drift",
        "finding-11",
        """
import jax, jax.numpy as jnp, optax

A = jnp.array([[3.0, 1.0], [1.0, 2.0]])

def energy(x):
    # computed in half precision "for speed"
    xa = x.astype(jnp.float16)
    return 0.5 * xa @ A.astype(jnp.float16) @ xa - jnp.sum(xa)

opt = optax.lbfgs()
vg = optax.value_and_grad_from_state(energy)

x = jnp.zeros(2, dtype=jnp.float32)
state = opt.init(x)

@jax.jit
def step(x, state):
    value, grad = vg(x, state=state)
    updates, state = opt.update(grad, state, x, value=value, grad=grad, value_fn=energy)
    return optax.apply_updates(x, updates), state, value

for _ in range(5):
    x, state, value = step(x, state)
print(x, value)
""",
    ),
    "blind-drift-lbfgs-x64-scan": (
        "drift",
        "finding-11",
        """
import jax
jax.config.update("jax_enable_x64", True)
import numpy as np
import jax.numpy as jnp
import optax

# data arrives as float64 (x64 on), the initial guess was saved as float32
X = jnp.asarray(np.linspace(0.0, 1.0, 20))
Y = 2.0 * X + 1.0
theta0 = jnp.asarray(np.zeros(2, dtype=np.float32))

def residual_loss(theta):
    pred = theta[0] * X + theta[1]
    return jnp.mean((pred - Y) ** 2)

solver = optax.lbfgs()
value_and_grad = optax.value_and_grad_from_state(residual_loss)

def solve(theta, n_steps=15):
    def step(carry, _):
        theta, state = carry
        value, grad = value_and_grad(theta, state=state)
        updates, state = solver.update(grad, state, theta, value=value, grad=grad,
                                       value_fn=residual_loss)
        theta = optax.apply_updates(theta, updates)
        return (theta, state), value
    (theta, _), values = jax.lax.scan(step, (theta, solver.init(theta)), None, length=n_steps)
    return theta, values

theta, values = solve(theta0)
print(theta, values[-1])
""",
    ),
    "blind-drift-lbfgs-x64-while-loop": (
        "drift",
        "finding-11",
        """
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import numpy as np
import optax
import optax.tree_utils as otu

coeffs = jnp.array([1.0, 10.0, 100.0])          # float64 under x64

def quadratic(x):
    return 0.5 * jnp.sum(coeffs * x ** 2)

def run_opt(init_params, fun, opt, max_iter, tol):
    value_and_grad_fun = optax.value_and_grad_from_state(fun)

    def step(carry):
        params, state = carry
        value, grad = value_and_grad_fun(params, state=state)
        updates, state = opt.update(grad, state, params, value=value, grad=grad, value_fn=fun)
        params = optax.apply_updates(params, updates)
        return params, state

    def continuing_criterion(carry):
        _, state = carry
        iter_num = otu.tree_get(state, "count")
        grad = otu.tree_get(state, "grad")
        err = otu.tree_norm(grad)
        return (iter_num == 0) | ((iter_num < max_iter) & (err >= tol))

    init_carry = (init_params, opt.init(init_params))
    final_params, final_state = jax.lax.while_loop(continuing_criterion, step, init_carry)
    return final_params, final_state

x0 = jnp.asarray(np.ones(3, dtype=np.float32))   # checkpoint saved in float32
params, _ = run_opt(x0, quadratic, optax.lbfgs(), max_iter=100, tol=1e-6)
print(params)
""",
    ),
    "blind-drift-monitor-ema-scan": (
        "drift",
        "finding-1",
        """
import jax, jax.numpy as jnp, optax

clip = 1.0
opt = optax.chain(
    optax.monitor({
        "grad_norm": optax.tree.norm,
        "clipped_frac": optax.measure_with_ema(lambda g: optax.tree.norm(g) > clip, decay=0.9),
    }),
    optax.clip_by_global_norm(clip),
    optax.sgd(0.05, momentum=0.9),
)

def loss(params, batch):
    x, y = batch
    return jnp.mean((x @ params["w"] + params["b"] - y) ** 2)

def train(params, batches):
    def body(carry, batch):
        params, state = carry
        l, g = jax.value_and_grad(loss)(params, batch)
        u, state = opt.update(g, state, params)
        return (optax.apply_updates(params, u), state), l
    (params, state), losses = jax.lax.scan(body, (params, opt.init(params)), batches)
    return params, state, losses

params = {"w": jnp.zeros((3, 1)), "b": jnp.zeros((1,))}
batches = (jnp.ones((6, 8, 3)), jnp.ones((6, 8, 1)))
params, state, losses = train(params, batches)
print(losses, optax.tree.get(state, "grad_norm"))
""",
    ),
    "blind-drift-own-cond-branches": (
        "drift",
        "own:lax.cond",
        """
import jax, jax.numpy as jnp

def warmup_lr(step, base_lr=1e-3, warmup=100):
    return jax.lax.cond(
        step < warmup,
        lambda s: base_lr * s / warmup,            # float32
        lambda s: jnp.asarray(base_lr, jnp.float16),  # someone "saved memory" here
        step,
    )

@jax.jit
def sgd_step(w, g, step):
    return w - warmup_lr(step) * g

print(sgd_step(jnp.ones(3), jnp.ones(3), jnp.asarray(5)))
""",
    ),
    "blind-drift-own-fori-buffer-grows": (
        "drift",
        "own:lax.fori_loop",
        """
import jax, jax.numpy as jnp

class Sampler:
    def __init__(self, n_steps):
        self.n_steps = n_steps

    def step(self, i, samples):
        key = jax.random.fold_in(jax.random.PRNGKey(0), i)
        new = jax.random.normal(key, (1, 2))
        return jnp.concatenate([samples, new], axis=0)

    def run(self):
        init = jnp.zeros((1, 2))
        return jax.lax.fori_loop(0, self.n_steps, self.step, init)

print(Sampler(5).run().shape)
""",
    ),
    "blind-drift-own-scan-bf16-carry": (
        "drift",
        "own:lax.scan",
        """
import jax, jax.numpy as jnp

def rms_norm(x, eps=1e-6):
    return x / jnp.sqrt(jnp.mean(x ** 2) + eps)

def rollout(h0, inputs, W):
    def cell(h, x):
        h = jnp.tanh(W @ h + x)          # W is float32, h is bfloat16 -> float32
        return rms_norm(h), h.sum()
    return jax.lax.scan(cell, h0, inputs)

W = jnp.eye(4)
h0 = jnp.zeros((4,), dtype=jnp.bfloat16)
inputs = jnp.ones((10, 4), dtype=jnp.bfloat16)
h, sums = rollout(h0, inputs, W)
print(sums)
""",
    ),
    "blind-drift-own-scan-user-cast-params": (
        "drift",
        "own:lax.scan",
        """
import jax, jax.numpy as jnp, optax

opt = optax.adam(1e-3)

def loss_fn(p, x):
    return jnp.mean(jnp.tanh(x @ p["w"]) ** 2)

def train(p, xs):
    def step(carry, x):
        p, s = carry
        p_half = jax.tree.map(lambda a: a.astype(jnp.bfloat16), p)
        l, g = jax.value_and_grad(loss_fn)(p_half, x.astype(jnp.bfloat16))
        g = jax.tree.map(lambda a: a.astype(jnp.float32), g)
        u, s = opt.update(g, s, p)
        p_half = optax.apply_updates(p_half, u)
        return (p_half, s), l
    return jax.lax.scan(step, (p, opt.init(p)), xs)

p = {"w": jnp.ones((4, 2))}
(p, s), losses = train(p, jnp.ones((10, 3, 4)))
print(losses)
""",
    ),
    "blind-drift-own-while-loop-newton": (
        "drift",
        "own:lax.while_loop",
        """
import jax, jax.numpy as jnp

def newton_sqrt(a, tol=1e-6, max_iter=50):
    def cond_fn(state):
        x, i = state
        return (jnp.abs(x * x - a) > tol) & (i < max_iter)
    def body_fn(state):
        x, i = state
        x = 0.5 * (x + a / x)
        return x, i + 1.0   # counter accidentally becomes a float
    x, n = jax.lax.while_loop(cond_fn, body_fn, (a, jnp.int32(0)))
    return x, n

print(jax.jit(newton_sqrt)(jnp.float32(2.0)))
""",
    ),
    "blind-drift-prodigy-mixed-dtype-scan": (
        "drift",
        "finding-5",
        """
import jax, jax.numpy as jnp, optax

def make_params():
    # embedding table kept in bf16 to save memory, the rest in f32
    return {
        "embed": jnp.full((10, 4), 0.1, dtype=jnp.bfloat16),
        "proj": jnp.full((4, 2), 0.1, dtype=jnp.float32),
    }

def loss(params, ids, target):
    h = params["embed"][ids].astype(jnp.float32)
    return jnp.mean((h @ params["proj"] - target) ** 2)

optimizer = optax.contrib.prodigy(learning_rate=1.0)

def train(params, ids, target, steps=5):
    def step(carry, _):
        params, state = carry
        l, g = jax.value_and_grad(loss)(params, ids, target)
        upd, state = optimizer.update(g, state, params)
        return (optax.apply_updates(params, upd), state), l
    return jax.lax.scan(step, (params, optimizer.init(params)), length=steps)

ids = jnp.array([1, 2, 3]); target = jnp.ones((3, 2))
(_, _), losses = train(make_params(), ids, target)
print(losses)
""",
    ),
    "blind-muon-scale-by-muon-chain": (
        "drift",
        "finding-6",
        """
import jax, jax.numpy as jnp, optax

def init_mlp(key, sizes=(16, 32, 32, 4)):
    keys = jax.random.split(key, len(sizes) - 1)
    return [jax.random.normal(k, (a, b)) / jnp.sqrt(a) for k, a, b in zip(keys, sizes[:-1], sizes[1:])]

def forward(ws, x):
    for w in ws[:-1]:
        x = jax.nn.relu(x @ w)
    return x @ ws[-1]

ws = init_mlp(jax.random.PRNGKey(0))
tx = optax.chain(optax.contrib.scale_by_muon(), optax.scale_by_learning_rate(0.02))
state = tx.init(ws)

x = jnp.ones((8, 16)); y = jnp.zeros((8, 4))
grads = jax.grad(lambda ws: jnp.mean((forward(ws, x) - y) ** 2))(ws)
updates, state = tx.update(grads, state, ws)
ws = optax.apply_updates(ws, updates)
""",
    ),
    "blind-sm3-scalar-temperature": (
        "drift",
        "finding-8",
        """
import jax, jax.numpy as jnp, optax

params = {
    "logit_scale": jnp.array(2.659),           # CLIP-style learned temperature
    "img_proj": jnp.ones((8, 4)) * 0.1,
    "txt_proj": jnp.ones((8, 4)) * 0.1,
}

def clip_loss(params, img, txt):
    a = img @ params["img_proj"]; b = txt @ params["txt_proj"]
    logits = jnp.exp(params["logit_scale"]) * a @ b.T
    labels = jnp.arange(logits.shape[0])
    return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

opt = optax.sm3(learning_rate=0.1)
state = opt.init(params)
img = jnp.ones((3, 8)); txt = jnp.ones((3, 8))
grads = jax.grad(clip_loss)(params, img, txt)
updates, state = opt.update(grads, state, params)
""",
    ),
    "blind-leaf-adam-init-module-with-name": (
        "leaf",
        "diffrax-521",
        """
import jax, jax.numpy as jnp, equinox as eqx, optax

class Encoder(eqx.Module):
    proj: eqx.nn.Linear
    norm: eqx.nn.LayerNorm
    name: str
    activation: callable

    def __init__(self, key, name="encoder"):
        self.proj = eqx.nn.Linear(8, 8, key=key)
        self.norm = eqx.nn.LayerNorm(8)
        self.name = name
        self.activation = lambda x: jax.nn.gelu(x, approximate=True)

    def __call__(self, x):
        return self.activation(self.norm(self.proj(x)))

enc = Encoder(jax.random.PRNGKey(0))
optimizer = optax.adamw(learning_rate=3e-4, weight_decay=1e-2)
opt_state = optimizer.init(enc)
""",
    ),
    "blind-leaf-adam-init-ode-config-dict": (
        "leaf",
        "diffrax-521",
        """
import jax, jax.numpy as jnp, diffrax, optax

def lotka_volterra(t, y, theta):
    a, b, c, d = theta
    prey, pred = y
    return jnp.stack([a * prey - b * prey * pred, d * prey * pred - c * pred])

state = {
    "theta": jnp.array([1.0, 0.1, 1.5, 0.075]),
    "y0": jnp.array([10.0, 5.0]),
    "controller": diffrax.PIDController(rtol=1e-5, atol=1e-5),
}

def simulate(state, ts):
    sol = diffrax.diffeqsolve(diffrax.ODETerm(lotka_volterra), diffrax.Dopri5(), ts[0], ts[-1], 0.01,
                              state["y0"], args=state["theta"], saveat=diffrax.SaveAt(ts=ts),
                              stepsize_controller=state["controller"])
    return sol.ys

ts = jnp.linspace(0.0, 10.0, 20)
data = simulate(state, ts)

opt = optax.chain(optax.clip(1.0), optax.adam(1e-2))
opt_state = opt.init(state)
""",
    ),
    "blind-leaf-apply-updates-whole-model": (
        "leaf",
        "diffrax-521",
        """
import jax, jax.numpy as jnp, equinox as eqx, optax

model = eqx.nn.MLP(4, 1, 32, 2, activation=jax.nn.relu, key=jax.random.PRNGKey(0))
opt = optax.sgd(1e-2, momentum=0.9)
opt_state = opt.init(eqx.filter(model, eqx.is_inexact_array))

def loss_fn(model, x, y):
    return jnp.mean((jax.vmap(model)(x) - y) ** 2)

x = jnp.ones((8, 4)); y = jnp.zeros((8, 1))
grads = eqx.filter_grad(loss_fn)(model, x, y)
updates, opt_state = opt.update(grads, opt_state, model)
model = optax.apply_updates(model, updates)
print(loss_fn(model, x, y))
""",
    ),
    "blind-leaf-galore-eqx-filtered": (
        "leaf",
        "finding-7",
        """
import jax, jax.numpy as jnp, equinox as eqx, optax

class MyNet(eqx.Module):
    mlp: eqx.nn.MLP
    norm: eqx.nn.LayerNorm

    def __init__(self, key):
        self.mlp = eqx.nn.MLP(32, 32, 64, 2, key=key)
        self.norm = eqx.nn.LayerNorm(32, use_bias=False)

    def __call__(self, x):
        return self.mlp(self.norm(x))

net = MyNet(jax.random.PRNGKey(0))
optimizer = optax.contrib.galore(learning_rate=1e-3, rank=4)
opt_state = optimizer.init(eqx.filter(net, eqx.is_inexact_array))
""",
    ),
    "blind-leaf-jax-jit-step-with-module": (
        "leaf",
        "diffrax-521",
        """
import functools
import jax, jax.numpy as jnp, equinox as eqx, optax

model = eqx.nn.MLP(3, 1, 16, 1, activation=functools.partial(jax.nn.leaky_relu, negative_slope=0.1),
                   key=jax.random.PRNGKey(2))
tx = optax.rmsprop(1e-3)
opt_state = tx.init(eqx.filter(model, eqx.is_array))

@jax.jit
def train_step(model, opt_state, x, y):
    def loss(m):
        return jnp.mean((jax.vmap(m)(x) - y) ** 2)
    grads = eqx.filter_grad(loss)(model)
    updates, opt_state = tx.update(grads, opt_state, model)
    return eqx.apply_updates(model, updates), opt_state

model, opt_state = train_step(model, opt_state, jnp.ones((4, 3)), jnp.ones((4, 1)))
""",
    ),
    "blind-leaf-lbfgs-eqx-filtered-grad": (
        "leaf",
        "optax-1017",
        """
import jax, jax.numpy as jnp, equinox as eqx, optax

class MyNet(eqx.Module):
    layers: list
    act: callable

    def __init__(self, key):
        k1, k2 = jax.random.split(key)
        self.layers = [eqx.nn.Linear(3, 8, key=k1), eqx.nn.Linear(8, 1, key=k2)]
        self.act = jax.nn.softplus

    def __call__(self, x):
        return self.layers[1](self.act(self.layers[0](x)))[0]

net = MyNet(jax.random.PRNGKey(1))
X = jnp.ones((10, 3)); Y = jnp.zeros((10,))

@eqx.filter_value_and_grad
def loss(net):
    return jnp.mean((jax.vmap(net)(X) - Y) ** 2)

opt = optax.lbfgs(memory_size=5)
state = opt.init(eqx.filter(net, eqx.is_array))

@eqx.filter_jit
def step(net, state):
    value, grads = loss(net)
    updates, state = opt.update(grads, state, net, value=value, grad=grads,
                                value_fn=lambda m: loss(m)[0])
    return eqx.apply_updates(net, updates), state, value

for _ in range(3):
    net, state, value = step(net, state)
print(value)
""",
    ),
    "blind-leaf-lbfgs-eqx-mlp": (
        "leaf",
        "optax-1017",
        """
import jax, jax.numpy as jnp, equinox as eqx, optax

key = jax.random.PRNGKey(0)
model = eqx.nn.MLP(in_size=2, out_size=1, width_size=16, depth=2, activation=jax.nn.tanh, key=key)

xs = jax.random.normal(key, (64, 2))
ys = jnp.sin(xs[:, :1]) + xs[:, 1:] ** 2

def loss(model):
    pred = jax.vmap(model)(xs)
    return jnp.mean((pred - ys) ** 2)

solver = optax.lbfgs()
opt_state = solver.init(model)
value_and_grad = optax.value_and_grad_from_state(loss)

for it in range(10):
    value, grad = value_and_grad(model, state=opt_state)
    updates, opt_state = solver.update(grad, opt_state, model, value=value, grad=grad, value_fn=loss)
    model = optax.apply_updates(model, updates)
print(value)
""",
    ),
    "blind-leaf-multisteps-diffrax-pid": (
        "leaf",
        "diffrax-521",
        """
import jax, jax.numpy as jnp, equinox as eqx, diffrax, optax

class VectorField(eqx.Module):
    l1: eqx.nn.Linear
    l2: eqx.nn.Linear

    def __init__(self, key):
        k1, k2 = jax.random.split(key)
        self.l1 = eqx.nn.Linear(2, 16, key=k1)
        self.l2 = eqx.nn.Linear(16, 2, key=k2)

    def __call__(self, y):
        return self.l2(jnp.tanh(self.l1(y)))

class NeuralODE(eqx.Module):
    func: VectorField
    solver: diffrax.AbstractSolver
    controller: diffrax.AbstractStepSizeController

    def __init__(self, key):
        self.func = VectorField(key)
        self.solver = diffrax.Tsit5()
        self.controller = diffrax.PIDController(rtol=1e-3, atol=1e-6)

    def __call__(self, y0, ts):
        term = diffrax.ODETerm(lambda t, y, args: self.func(y))
        sol = diffrax.diffeqsolve(term, self.solver, ts[0], ts[-1], 0.1, y0,
                                  stepsize_controller=self.controller,
                                  saveat=diffrax.SaveAt(ts=ts))
        return sol.ys

model = NeuralODE(jax.random.PRNGKey(0))
optim = optax.MultiSteps(optax.adabelief(1e-3), every_k_schedule=4)
opt_state = optim.init(model)
print(opt_state)
""",
    ),
    "blind-callable-decayed-weights-mask-partial": (
        "callable",
        "optax-1373",
        """
import functools
import jax, jax.numpy as jnp, optax

def is_kernel(params, min_ndim):
    return {name: p.ndim >= min_ndim for name, p in params.items()}

# make weight decay tunable from the training loop
tx = optax.chain(
    optax.clip_by_global_norm(1.0),
    optax.inject_hyperparams(optax.add_decayed_weights)(
        weight_decay=1e-2, mask=functools.partial(is_kernel, min_ndim=2)),
    optax.scale_by_adam(),
    optax.scale(-3e-4),
)
params = {"w": jnp.ones((4, 4)), "b": jnp.zeros(4)}
state = tx.init(params)
updates, state = tx.update(params, state, params)
print(updates)
""",
    ),
    "blind-callable-inject-adamw-mask-lambda": (
        "callable",
        "optax-1373",
        """
import jax, jax.numpy as jnp, optax

params = {
    "conv": {"kernel": jnp.ones((3, 3, 4, 8)), "bias": jnp.zeros((8,))},
    "head": {"kernel": jnp.ones((8, 10)), "bias": jnp.zeros((10,))},
}

# decay only kernels, never biases
decay_mask = lambda p: jax.tree_util.tree_map_with_path(lambda path, x: path[-1].key == "kernel", p)

schedule = optax.warmup_cosine_decay_schedule(0.0, 1e-3, 100, 1000)
tx = optax.inject_hyperparams(optax.adamw)(
    learning_rate=schedule, weight_decay=1e-4, mask=decay_mask)
opt_state = tx.init(params)

grads = jax.tree.map(jnp.ones_like, params)
updates, opt_state = jax.jit(tx.update)(grads, opt_state, params)
print(opt_state.hyperparams["learning_rate"])
""",
    ),
    "blind-callable-inject-mask-eqx-module": (
        "callable",
        "optax-1373",
        """
import jax, jax.numpy as jnp, equinox as eqx, optax

class MyNet(eqx.Module):
    embed: eqx.nn.Embedding
    out: eqx.nn.Linear

    def __init__(self, key):
        k1, k2 = jax.random.split(key)
        self.embed = eqx.nn.Embedding(100, 16, key=k1)
        self.out = eqx.nn.Linear(16, 4, key=k2)

    def __call__(self, tok):
        return self.out(self.embed(tok))

net = MyNet(jax.random.PRNGKey(0))
params = eqx.filter(net, eqx.is_array)
# weight decay on the Linear weight only: a tree of bools shaped like the model
wd_mask = jax.tree.map(lambda _: False, params)
wd_mask = eqx.tree_at(lambda m: m.out.weight, wd_mask, True)

opt = optax.inject_hyperparams(optax.adamw)(learning_rate=1e-3, weight_decay=0.05, mask=wd_mask)
opt_state = opt.init(params)
""",
    ),
    "blind-callable-inject-mu-dtype": (
        "callable",
        "optax-1373",
        """
import jax, jax.numpy as jnp, optax

params = {"w": jnp.ones((256, 256)), "b": jnp.zeros((256,))}

# tune lr from the outside, keep the first moment in bf16 to save memory
opt = optax.inject_hyperparams(optax.adam)(learning_rate=1e-3, mu_dtype=jnp.bfloat16)
state = opt.init(params)

@jax.jit
def step(params, state):
    grads = jax.tree.map(lambda p: 0.01 * p, params)
    updates, state = opt.update(grads, state, params)
    return optax.apply_updates(params, updates), state

params, state = step(params, state)
state.hyperparams["learning_rate"] = 5e-4
""",
    ),
    "blind-callable-multi-transform-labels-module": (
        "callable",
        "optax-1373",
        """
import jax, jax.numpy as jnp, equinox as eqx, optax

class Tower(eqx.Module):
    backbone: eqx.nn.MLP
    head: eqx.nn.Linear

    def __call__(self, x):
        return self.head(self.backbone(x))

key1, key2 = jax.random.split(jax.random.PRNGKey(3))
tower = Tower(eqx.nn.MLP(6, 6, 12, 1, key=key1), eqx.nn.Linear(6, 1, key=key2))
params = eqx.filter(tower, eqx.is_inexact_array)

labels = jax.tree.map(lambda _: "backbone", params)
labels = eqx.tree_at(lambda t: t.head, labels, replace_fn=lambda h: jax.tree.map(lambda _: "head", h))

tx = optax.multi_transform({"backbone": optax.sgd(1e-4), "head": optax.adam(1e-3)}, labels)
state = tx.init(params)
""",
    ),
    "blind-donate-cocob-state-only": (
        "donation",
        "finding-10",
        """
import functools
import jax, jax.numpy as jnp, optax

def mse(params, batch):
    x, y = batch
    return jnp.mean((jnp.tanh(x @ params["w1"]) @ params["w2"] - y) ** 2)

tx = optax.contrib.cocob()

@functools.partial(jax.jit, donate_argnums=(1,))
def update(params, opt_state, batch):
    grads = jax.grad(mse)(params, batch)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state

params = {"w1": 0.1 * jnp.ones((5, 7)), "w2": 0.1 * jnp.ones((7, 1))}
opt_state = tx.init(params)
batch = (jnp.ones((4, 5)), jnp.ones((4, 1)))
for _ in range(3):
    params, opt_state = update(params, opt_state, batch)
print(mse(params, batch))
""",
    ),
    "blind-donate-dog-train-step": (
        "donation",
        "finding-10",
        """
import jax, jax.numpy as jnp, optax

def loss_fn(params, x, y):
    pred = x @ params["w"] + params["b"]
    return jnp.mean((pred - y) ** 2)

optimizer = optax.contrib.dog()
def make_step():
    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        return params, opt_state, loss
    return jax.jit(step, donate_argnums=(0, 1))

key = jax.random.PRNGKey(0)
params = {"w": jax.random.normal(key, (4, 1)), "b": jnp.zeros((1,))}
opt_state = optimizer.init(params)
train_step = make_step()
x = jnp.ones((16, 4)); y = jnp.ones((16, 1))
for i in range(3):
    params, opt_state, loss = train_step(params, opt_state, x, y)
    print(i, float(loss))
""",
    ),
    "blind-donate-dowg-deleted-after-apply": (
        "donation",
        "finding-10",
        """
import functools
import jax, jax.numpy as jnp, optax

@functools.partial(jax.jit, donate_argnums=(0,))
def apply_inplace(params, updates):
    # donate the old params so XLA can update them in place
    return optax.apply_updates(params, updates)

def loss(params):
    return jnp.sum(params["a"] ** 2) + jnp.sum(jnp.abs(params["b"]))

params = {"a": jnp.arange(4.0), "b": jnp.ones((2, 2))}
tx = optax.contrib.dowg()
opt_state = tx.init(params)

for step in range(3):
    grads = jax.grad(loss)(params)
    updates, opt_state = tx.update(grads, opt_state, params)
    params = apply_inplace(params, updates)
    print(step, loss(params))
""",
    ),
    "blind-donate-mechanize-sgd": (
        "donation",
        "finding-10",
        """
import jax, jax.numpy as jnp, optax

class Trainer:
    def __init__(self, lr=1e-2):
        self.tx = optax.contrib.mechanize(optax.sgd(lr, momentum=0.9))
        self._step = jax.jit(self._train_step, donate_argnums=(0, 1))

    def loss(self, params, x):
        return jnp.sum((x @ params["kernel"]) ** 2)

    def _train_step(self, params, opt_state, x):
        g = jax.grad(self.loss)(params, x)
        u, opt_state = self.tx.update(g, opt_state, params)
        return optax.apply_updates(params, u), opt_state

    def fit(self, params, x, steps=3):
        opt_state = self.tx.init(params)
        for _ in range(steps):
            params, opt_state = self._step(params, opt_state, x)
        return params

print(Trainer().fit({"kernel": jnp.eye(3)}, jnp.ones((2, 3))))
""",
    ),
    "blind-donate-prodigy-eqx-filter-jit": (
        "donation",
        "finding-10",
        """
import jax, jax.numpy as jnp, equinox as eqx, optax

model = eqx.nn.MLP(2, 1, 8, 2, key=jax.random.PRNGKey(0))
optim = optax.contrib.prodigy()
opt_state = optim.init(eqx.filter(model, eqx.is_inexact_array))

@eqx.filter_jit(donate="all")
def make_step(model, opt_state, x, y):
    loss, grads = eqx.filter_value_and_grad(
        lambda m: jnp.mean((jax.vmap(m)(x) - y) ** 2))(model)
    updates, opt_state = optim.update(grads, opt_state, eqx.filter(model, eqx.is_inexact_array))
    return eqx.apply_updates(model, updates), opt_state, loss

x = jnp.ones((16, 2)); y = jnp.zeros((16, 1))
for step in range(3):
    model, opt_state, loss = make_step(model, opt_state, x, y)
    print(step, loss)
""",
    ),
    "blind-unrelated-apply-updates-tree-mismatch": (
        "unrelated",
        "",
        """
import jax, jax.numpy as jnp, optax

params = {"encoder": {"w": jnp.ones((4, 4))}, "decoder": {"w": jnp.ones((4, 4))}}
opt = optax.adam(1e-3)
state = opt.init(params)

def loss(enc, dec, x):
    return jnp.sum((x @ enc["w"]) @ dec["w"])

# only the encoder's grads are computed, but applied to the whole tree
g_enc = jax.grad(loss)(params["encoder"], params["decoder"], jnp.ones((2, 4)))
updates, state = opt.update(g_enc, state, params)
params = optax.apply_updates(params, updates)
""",
    ),
    "blind-unrelated-clip-global-norm-args": (
        "unrelated",
        "",
        """
import jax, jax.numpy as jnp, optax

params = {"w": jnp.ones((3, 3))}
grads = {"w": 100.0 * jnp.ones((3, 3))}
# clip the gradients directly, like torch.nn.utils.clip_grad_norm_
clipped = optax.clip_by_global_norm(grads, 1.0)
""",
    ),
    "blind-unrelated-diffrax-max-steps": (
        "unrelated",
        "",
        """
import jax, jax.numpy as jnp, diffrax

def van_der_pol(t, y, args):
    mu = args
    x, v = y
    return jnp.stack([v, mu * (1 - x ** 2) * v - x])

term = diffrax.ODETerm(van_der_pol)
sol = diffrax.diffeqsolve(
    term, diffrax.Tsit5(), t0=0.0, t1=3000.0, dt0=0.01, y0=jnp.array([2.0, 0.0]), args=1000.0,
    stepsize_controller=diffrax.PIDController(rtol=1e-6, atol=1e-8), max_steps=200,
)
print(sol.ys)
""",
    ),
    "blind-unrelated-eqx-linear-batched": (
        "unrelated",
        "",
        """
import jax, jax.numpy as jnp, equinox as eqx, optax

model = eqx.nn.Sequential([
    eqx.nn.Linear(3, 16, key=jax.random.PRNGKey(0)),
    eqx.nn.Lambda(jax.nn.relu),
    eqx.nn.Linear(16, 1, key=jax.random.PRNGKey(1)),
])
opt = optax.adam(1e-3)
opt_state = opt.init(eqx.filter(model, eqx.is_array))

@eqx.filter_value_and_grad
def loss(model, x, y):
    return jnp.mean((model(x) - y) ** 2)     # forgot jax.vmap over the batch

x = jnp.ones((32, 3)); y = jnp.zeros((32, 1))
l, grads = loss(model, x, y)
""",
    ),
    "blind-unrelated-filter-jit-bad-kwarg": (
        "unrelated",
        "",
        """
import jax, jax.numpy as jnp, equinox as eqx

model = eqx.nn.Linear(3, 2, key=jax.random.PRNGKey(0))

@eqx.filter_jit(static_argnums=(1,))
def evaluate(model, n):
    return jax.vmap(model)(jnp.ones((n, 3)))

print(evaluate(model, 4))
""",
    ),
    "blind-unrelated-grad-int-params": (
        "unrelated",
        "",
        """
import jax, jax.numpy as jnp, optax

params = {"w": jnp.arange(6).reshape(2, 3), "b": jnp.zeros(3)}   # w is int32
opt = optax.adamw(1e-3)
state = opt.init(params)

def loss(params, x):
    return jnp.sum(x @ params["w"] + params["b"])

grads = jax.grad(loss)(params, jnp.ones((4, 2)))
""",
    ),
    "blind-unrelated-grad-nonscalar": (
        "unrelated",
        "",
        """
import jax, jax.numpy as jnp, optax

def loss(params, x, y):
    return (x @ params["w"] - y) ** 2          # forgot the mean

params = {"w": jnp.zeros((3,))}
opt = optax.adam(1e-2)
state = opt.init(params)
x = jnp.ones((8, 3)); y = jnp.ones((8,))
grads = jax.grad(loss)(params, x, y)
""",
    ),
    "blind-unrelated-matmul-shape-jit": (
        "unrelated",
        "",
        """
import jax, jax.numpy as jnp, optax

def init(key):
    k1, k2 = jax.random.split(key)
    return {"w1": jax.random.normal(k1, (10, 32)), "w2": jax.random.normal(k2, (16, 1))}

def predict(params, x):
    h = jax.nn.relu(x @ params["w1"])
    return h @ params["w2"]

@jax.jit
def loss(params, x, y):
    return jnp.mean((predict(params, x) - y) ** 2)

params = init(jax.random.PRNGKey(0))
opt = optax.adam(1e-3)
state = opt.init(params)
x = jnp.ones((4, 10)); y = jnp.ones((4, 1))
grads = jax.grad(loss)(params, x, y)
""",
    ),
    "blind-unrelated-monitor-wrong-arg": (
        "unrelated",
        "",
        """
import jax, jax.numpy as jnp, optax

opt = optax.chain(optax.monitor(optax.scale_by_adam()), optax.scale(-1e-2))

def loss(p):
    return jnp.sum(p ** 2)

def run(p):
    def body(carry, _):
        p, s = carry
        g = jax.grad(loss)(p)
        u, s = opt.update(g, s, p)
        return (optax.apply_updates(p, u), s), loss(p)
    return jax.lax.scan(body, (p, opt.init(p)), length=10)

print(run(jnp.ones(3))[1])
""",
    ),
    "blind-unrelated-own-schedule-python-if": (
        "unrelated",
        "",
        """
import jax, jax.numpy as jnp, optax

def lr_schedule(step, warmup=100, peak=1e-3):
    if step < warmup:
        return peak * step / warmup
    return peak * 0.5 * (1 + jnp.cos(jnp.pi * (step - warmup) / 1000))

tx = optax.inject_hyperparams(optax.adam)(learning_rate=lr_schedule)
params = {"w": jnp.ones((2, 2))}
state = tx.init(params)

@jax.jit
def step(params, state):
    grads = jax.tree.map(jnp.ones_like, params)
    updates, state = tx.update(grads, state, params)
    return optax.apply_updates(params, updates), state

params, state = step(params, state)
""",
    ),
    "blind-unrelated-tracer-bool-early-stop": (
        "unrelated",
        "",
        """
import jax, jax.numpy as jnp, optax

opt = optax.sgd(0.1)

@jax.jit
def train_step(w, state, x, y):
    loss, g = jax.value_and_grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)
    if loss < 1e-3:            # early stopping inside the jitted step
        return w, state, loss
    u, state = opt.update(g, state)
    return optax.apply_updates(w, u), state, loss

w = jnp.zeros(3)
state = opt.init(w)
w, state, loss = train_step(w, state, jnp.ones((5, 3)), jnp.ones(5))
""",
    ),
    "blind-unrelated-zeros-traced-shape": (
        "unrelated",
        "",
        """
import jax, jax.numpy as jnp

@jax.jit
def pad_batch(x, target_len):
    pad = jnp.zeros((target_len - x.shape[0], x.shape[1]))
    return jnp.concatenate([x, pad], axis=0)

print(pad_batch(jnp.ones((3, 2)), 8).shape)
""",
    ),
}
