"""Tests for casebook.trace: exact types, drifts, excerpts and recorded cond calls."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from jax import lax

from casebook import trace
from casebook.trace import CondCall, Drift, Leaf

READS_PAGES = False


def test_type_str_covers_arrays_structs_keys_and_python_values() -> None:
    values = [
        jnp.array(True),
        jnp.ones(3),
        jnp.asarray(1),
        jnp.ones(2, jnp.bfloat16),
        jnp.ones((), jnp.uint32),
        jax.random.key(0),
        jax.ShapeDtypeStruct((2, 3), jnp.int32),
        jax.ShapeDtypeStruct((), jnp.float32, weak_type=True),
        1.5,
        True,
        "adam",
    ]
    assert [trace.type_str(v) for v in values] == [
        "bool[]",
        "f32[3]",
        "i32[] weak",
        "bf16[2]",
        "u32[]",
        "key<fry>[]",
        "i32[2,3]",
        "f32[] weak",
        "float (python)",
        "bool (python)",
        "str (python)",
    ]


def test_types_maps_over_a_tree() -> None:
    assert trace.types({"w": jnp.zeros(2), "n": (1, None)}) == {
        "w": "f32[2]",
        "n": ("int (python)", None),
    }


def _found_nan_step(state: dict) -> dict:
    """A toy step with the bug: ``bool + 0`` turns the flag into a weak int32."""
    return {"found_nan": {"w": state["found_nan"]["w"] + 0}, "x": state["x"] * 2}


STATE = {"found_nan": {"w": jnp.array(False)}, "x": jnp.ones(2)}


def test_type_diff_reports_dtype_and_weak_type_of_the_changed_leaf() -> None:
    report = trace.type_diff(STATE, jax.eval_shape(_found_nan_step, STATE))
    path = "['found_nan']['w']"
    assert report == [
        Drift(path, "dtype", "bool[]", "i32[] weak"),
        Drift(path, "weak_type", "bool[]", "i32[] weak"),
    ]
    assert bool(report) and len(report) == 2 and report[0].kind == "dtype"
    assert str(report[0]) == "['found_nan']['w']: dtype bool[] -> i32[] weak"
    assert "<td><code>weak_type</code></td>" in report._repr_html_()


def test_type_diff_reports_shape_and_no_drift() -> None:
    report = trace.type_diff({"a": jnp.ones(2)}, {"a": jnp.ones(3)})
    assert report == [Drift("['a']", "shape", "f32[2]", "f32[3]")]
    same = trace.type_diff(STATE, STATE)
    assert not same and str(same) == "no drift" and same._repr_html_() == "<p>no drift</p>"


def test_type_diff_structure_stops_at_first_difference() -> None:
    report = trace.type_diff({"a": 1, "b": 2}, {"a": 1, "c": 2})
    assert report == [Drift("", "structure", "{'a': *, 'b': *}", "{'a': *, 'c': *}")]
    assert str(report) == "<root>: structure {'a': *, 'b': *} -> {'a': *, 'c': *}"


def test_state_drift_tags_each_step() -> None:
    report = trace.state_drift(_found_nan_step, STATE, steps=2)
    assert [(d.step, d.kind) for d in report] == [
        (1, "dtype"),
        (1, "weak_type"),
        (2, "dtype"),
        (2, "weak_type"),
    ]
    assert str(report).splitlines()[2] == "step 2: ['found_nan']['w']: dtype bool[] -> i32[] weak"


def test_state_drift_select_and_optax_style_update() -> None:
    def update(grads: jax.Array, state: dict, params: jax.Array) -> tuple[jax.Array, dict]:
        return grads, {"count": state["count"] + 1.0}

    report = trace.state_drift(
        lambda s, g, p: update(g, s, p),
        {"count": jnp.zeros((), jnp.int32)},
        jnp.ones(2),
        jnp.ones(2),
        steps=1,
        select=lambda out: out[1],
    )
    # int32 + Python float promotes to a *weak* float32
    assert report == [
        Drift("['count']", "dtype", "i32[]", "f32[] weak", step=1),
        Drift("['count']", "weak_type", "i32[]", "f32[] weak", step=1),
    ]


def test_non_array_leaves_lists_function_and_float() -> None:
    leaves = trace.non_array_leaves({"fn": len, "lr": 0.1, "w": jnp.ones(2), "skip": None})
    assert leaves == [
        Leaf("['fn']", "builtin_function_or_method", "<built-in function len>"),
        Leaf("['lr']", "float", "0.1"),
    ]
    assert str(leaves).splitlines() == [
        "['fn']: builtin_function_or_method = <built-in function len>",
        "['lr']: float = 0.1",
    ]
    assert str(trace.non_array_leaves({"w": jnp.ones(2)})) == "no non-array leaves"


def test_treedef_diff() -> None:
    assert trace.treedef_diff({"a": 1, "b": 2}, {"a": 3, "b": 4}) is None
    assert (
        trace.treedef_diff({"a": 1, "b": 2}, {"a": 1, "c": 2})
        == "<root>: dict children differ; only in a: ['b']; only in b: ['c']"
    )
    assert trace.treedef_diff({"x": [1, 2, 3]}, {"x": [1, 2]}) == (
        "['x']: list has 3 vs 2 children; only in a: [2]"
    )
    assert trace.treedef_diff({"x": (1, None)}, {"x": (1, 2)}) == "['x'][1]: None vs leaf"
    assert trace.treedef_diff((1,), [1]) == "<root>: tuple vs list"


JAXPR = """{ lambda ; a:bool[] b:f32[]. let
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:f32[] = sin b
    e:f32[] = cos d
    f:f32[] = mul e 2.0:f32[]
    g:f32[] = add f 1.0:f32[]
  in (g,) }"""


def test_cut_keeps_ends_elides_and_marks() -> None:
    excerpt = trace.cut(JAXPR, "mul", mark={"convert_element_type": "bool becomes i32"})
    assert excerpt.splitlines() == [
        "{ lambda ; a:bool[] b:f32[]. let",
        "    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a"
        "   # <-- bool becomes i32",
        "    ...",
        "    f:f32[] = mul e 2.0:f32[]",
        "    ...",
        "  in (g,) }",
    ]
    assert excerpt.marked == [JAXPR.splitlines()[1]]
    assert isinstance(excerpt, str) and "mul e" in excerpt


def test_cut_context_and_keep_all() -> None:
    assert trace.cut(JAXPR, ["cos"], context=1).splitlines() == [
        "{ lambda ; a:bool[] b:f32[]. let",
        "    ...",
        "    d:f32[] = sin b",
        "    e:f32[] = cos d",
        "    f:f32[] = mul e 2.0:f32[]",
        "    ...",
        "  in (g,) }",
    ]
    assert trace.cut(JAXPR, None) == JAXPR


def test_excerpt_pretty_prints_raw() -> None:
    class Printer:
        def __init__(self) -> None:
            self.out = ""

        def text(self, s: str) -> None:
            self.out += s

    printer = Printer()
    trace.Excerpt("a\nb")._repr_pretty_(printer, False)
    assert printer.out == "a\nb"


def _cond_with_mul(p: jax.Array, x: jax.Array) -> jax.Array:
    return lax.cond(p, lambda y: y * 3.0, lambda y: y, x)


def test_show_jaxpr_and_count_primitives_find_nested_mul() -> None:
    excerpt = trace.show_jaxpr(_cond_with_mul, True, 1.0, keep="mul")
    assert excerpt.splitlines()[0] == "{ lambda ; a:bool[] b:f32[]. let"
    assert "mul" in excerpt and excerpt.splitlines()[-1] == "  in (d,) }"
    counts = trace.count_primitives(_cond_with_mul, True, 1.0)
    assert counts["cond"] == 1 and counts["mul"] == 1
    nested = trace.count_primitives(jax.jit(_cond_with_mul), True, 1.0)
    assert nested["jit"] == 1 and nested["mul"] == 1
    closed = jax.make_jaxpr(_cond_with_mul)(True, 1.0)
    assert trace.count_primitives(closed) == counts == trace.count_primitives(closed.jaxpr)


def flag_branch(x: jax.Array) -> dict:
    return {"ok": x > 0}


def count_branch(x: jax.Array) -> dict:
    return {"ok": jnp.int32(1)}


def test_record_cond_branches_keeps_record_when_cond_raises() -> None:
    real_cond = jax.lax.cond
    x = jnp.ones((), jnp.int32)
    with pytest.raises(TypeError, match="cond branches must have equal output types"):
        with trace.record_cond_branches() as calls:
            lax.cond(True, flag_branch, count_branch, x)
    assert jax.lax.cond is real_cond
    assert calls == [
        CondCall(
            "flag_branch",
            "count_branch",
            {"ok": "bool[]"},
            {"ok": "i32[]"},
            [Drift("['ok']", "dtype", "bool[]", "i32[]")],
        )
    ]
    assert str(calls[0]).splitlines()[-1] == "  ['ok']: dtype bool[] -> i32[]"


def test_record_cond_branches_records_branch_errors_and_nested_conds_once() -> None:
    def broken(x: jax.Array) -> jax.Array:
        raise ValueError("no")

    def outer(x: jax.Array) -> jax.Array:
        return lax.cond(x > 0, lambda y: y, lambda y: -y, x)

    with trace.record_cond_branches() as calls:
        jax.jit(lambda p, x: lax.cond(p, outer, lambda y: y, x))(True, 1.0)
        with pytest.raises(ValueError):
            lax.cond(True, broken, outer, 1.0)
    assert [(c.true_name, c.false_name) for c in calls] == [
        ("outer", "<lambda>"),
        ("<lambda>", "<lambda>"),
        ("broken", "outer"),
    ]
    assert calls[2].true_out == "ValueError: no" and calls[2].diff is None
    assert calls[2].false_out == "f32[] weak"
    assert str(trace.CondCalls()) == "no lax.cond calls recorded"
