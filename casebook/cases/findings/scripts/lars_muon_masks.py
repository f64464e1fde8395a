import jax, jax.numpy as jnp, optax
params = {"w": jnp.ones((3, 3)), "b": jnp.ones(3)}
grads = jax.tree.map(jnp.zeros_like, params)
kw = dict(learning_rate=1.0, weight_decay=0.5,
          weight_decay_mask=lambda p: jax.tree.map(lambda x: x.ndim > 1, p))
def first_update(opt):
    return opt.update(grads, opt.init(params), params)[0]
same = []
for factory in (optax.lars, optax.contrib.muon):
    want, got = first_update(factory(**kw)), first_update(optax.inject_hyperparams(factory)(**kw))
    assert float(jnp.abs(want["w"]).max()) > 0 and float(jnp.abs(want["b"]).max()) == 0
    same.append(all(bool(jnp.allclose(want[k], got[k])) for k in want))
result = "fixed" if all(same) else "silent"
