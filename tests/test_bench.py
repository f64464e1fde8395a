"""Tests for casebook.bench and casebook.bench.claims: interleaving order, sample counts, reports,
compile time, variants of known cost, claims and the A/A control."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp
import matplotlib
import pytest

from casebook import bench
from casebook.bench import Timings, _timing, claims

READS_PAGES = False

matplotlib.use("Agg")

PLUS_ONE = jax.jit(lambda x: x + 1)
X = jnp.ones(1000)


def _logging_variant(name: str, log: list[str]) -> Callable[[], jax.Array]:
    def step() -> jax.Array:
        log.append(name)
        return PLUS_ONE(X)

    return step


def test_interleave_rotates_order_each_round() -> None:
    log: list[str] = []
    variants = {name: _logging_variant(name, log) for name in "abc"}
    bench.interleave(variants, rounds=4, warmup=1, control=False)
    assert "".join(log) == "abc" + "abc" + "bca" + "cab" + "abc"


def test_interleave_sample_counts_and_calls_per_round() -> None:
    log: list[str] = []
    variants = {name: _logging_variant(name, log) for name in "ab"}
    timings = bench.interleave(variants, rounds=3, warmup=2, calls_per_round=4, control=False)
    assert len(log) == (2 + 3) * 2 * 4
    for series in (timings.wall, timings.cpu, timings.faults):
        assert {name: len(samples) for name, samples in series.items()} == {"a": 3, "b": 3}
    assert all(s > 0 for s in timings.wall["a"] + timings.wall["b"])
    assert timings.meta["rounds"] == 3 and timings.meta["calls_per_round"] == 4
    assert timings.meta["jax"] == jax.__version__


def test_interleave_min_seconds_runs_whole_extra_rounds() -> None:
    log: list[str] = []
    timings = bench.interleave(
        {name: _logging_variant(name, log) for name in "ab"},
        rounds=1,
        warmup=0,
        min_seconds=0.05,
        control=False,
    )
    rounds = timings.meta["rounds"]
    assert rounds > 1 and len(timings.wall["a"]) == len(timings.wall["b"]) == rounds
    assert len(log) == 2 * rounds


def _synthetic() -> Timings:
    return Timings(
        wall={"slow": [0.004, 0.002, 0.003, 0.005, 0.001], "fast": [0.001, 0.001, 0.001]},
        cpu={"slow": [0.006, 0.006, 0.006, 0.006, 0.006], "fast": [0.001, 0.002, 0.003]},
        faults={"slow": [0, 0, 10, 0, 0], "fast": [1, 2, 3]},
        meta={"device": "cpu: test", "jax": "0.0"},
    )


def test_median_iqr_ratio_and_rows_on_known_samples() -> None:
    timings = _synthetic()
    assert timings.median("slow") == pytest.approx(0.003)
    assert timings.iqr("slow") == pytest.approx((0.002, 0.004))
    assert timings.ratio("slow", "fast") == pytest.approx(3.0)
    assert timings.rows()[0] == pytest.approx(
        {
            "variant": "slow",
            "median_ms": 3.0,
            "q25_ms": 2.0,
            "q75_ms": 4.0,
            "cpu_ms": 6.0,
            "faults": 0.0,
            "n": 5,
        }
    )
    assert timings.rows()[1]["faults"] == 2.0


def test_table_text_and_html() -> None:
    table = _synthetic().table()
    lines = str(table).splitlines()
    assert lines[0].split("|")[1:-1] == [
        " variant ",
        " median (ms) ",
        " IQR (ms) ",
        " CPU (ms) ",
        " faults/call ",
        " n ",
    ]
    assert lines[2] == "| slow    | 3           | 2 - 4    | 6        | 0           | 5 |"
    assert lines[-1] == "cpu: test, jax 0.0"
    assert "<td>fast</td><td>1</td>" in table._repr_html_()
    micro = str(_synthetic().table(unit="us", faults=False))
    assert "faults" not in micro and "| fast    | 1000" in micro


def test_to_dict_from_dict_round_trips_through_json() -> None:
    timings = bench.interleave({"plus": lambda: PLUS_ONE(X)}, rounds=3, warmup=1)
    again = Timings.from_dict(json.loads(json.dumps(timings.to_dict())))
    assert again == timings
    assert again.meta["device"] == bench.device_label()


def test_plot_draws_one_bar_per_variant() -> None:
    import matplotlib.pyplot as plt

    ax = _synthetic().plot(title="t", baseline="fast")
    assert len(ax.patches) == 2
    assert [p.get_width() for p in ax.patches] == pytest.approx([3.0, 1.0])
    assert ax.get_title() == "t"
    assert [t.get_text() for t in ax.texts] == ["3 ms (3.00×)", "1 ms (1.00×)"]
    plt.close(ax.figure)


def test_bandwidth_and_floor_fraction_on_synthetic_numbers() -> None:
    assert bench.bandwidth(2_000_000_000, 0.5) == 4.0
    timings = Timings(
        wall={"step": [0.004], "copy": [0.001]},
        cpu={"step": [0.0], "copy": [0.0]},
        faults={"step": [0.0], "copy": [0.0]},
        meta={},
    )
    # step moves 2 MB in 4 ms (0.5 GB/s), copy 1 MB in 1 ms (1 GB/s)
    fraction = bench.floor_fraction(timings, "step", 2_000_000, copy_bytes=1_000_000)
    assert fraction == pytest.approx(0.5)


def test_copy_reference_donates_and_feeds_back() -> None:
    step, moved = bench.copy_reference(4000)
    assert moved == 8000
    first = step()
    second = step()
    assert first.is_deleted() and second.shape == (1000,) and second.dtype == jnp.float32
    step16, moved16 = bench.copy_reference(4000, dtype="bfloat16")
    assert moved16 == 8000 and step16().shape == (2000,)


def test_compile_seconds_really_recompiles() -> None:
    def fn(x: jax.Array) -> jax.Array:
        return jnp.sin(x) * 2

    result = bench.compile_seconds(fn, X, repeats=2)
    assert len(result.samples) == len(result.lower_samples) == 2
    # JAX caches across fresh jax.jit wrappers of one function: this one is a cache hit
    start = time.perf_counter()
    jax.jit(fn).lower(X).compile()
    cached = time.perf_counter() - start
    assert min(result.samples) > 5 * cached
    assert result.median > 1e-4
    assert all(total > lower > 0 for total, lower in zip(result.samples, result.lower_samples))
    assert str(result).startswith("compile ")


def test_device_label_and_scale_for_device() -> None:
    label = bench.device_label()
    backend = jax.default_backend()
    assert label.startswith(f"{jax.devices()[0].platform}: ")
    assert bench.scale_for_device(10, 1000) == (10 if backend == "cpu" else 1000)
    if backend == "cpu":
        assert label.endswith(" cores)")


# ------------------------------------------------------------------ known costs, claims


def _sleeps(milliseconds: float):
    """A variant that takes ``milliseconds`` of wall time per call (a sleep: its length
    does not depend on how loaded the CPU is, only its wake-up does, by a little)."""

    def step() -> int:
        time.sleep(milliseconds / 1e3)
        return 0

    return step


def test_each_variant_gets_its_own_samples() -> None:
    """Variants of known, different cost: a timer that mixed up their samples (gave every
    variant the first one's, or swapped two) would fail these ratios."""
    timings = bench.interleave(
        {"10 ms": _sleeps(10), "30 ms": _sleeps(30), "20 ms": _sleeps(20)}, rounds=5, warmup=1
    )
    assert timings.names == ["10 ms", "30 ms", "20 ms", "10 ms (A/A)"]
    assert 2.0 < timings.ratio("30 ms", "10 ms") < 3.5
    assert 1.4 < timings.ratio("20 ms", "10 ms") < 2.4
    made = claims.claim(
        timings,
        "30 ms",
        "20 ms",
        at_least=1.2,
        at_most=1.8,
        says="30 ms takes 1.2x to 1.8x the time of 20 ms",
        tolerance=0.3,
    )
    assert made.holds and abs(made.control - 1) < 0.3


def test_a_claim_that_does_not_hold_fails() -> None:
    timings = bench.interleave({"10 ms": _sleeps(10), "20 ms": _sleeps(20)}, rounds=4, warmup=1)
    made = timings.claim("20 ms", "10 ms", at_least=1.4, says="20 ms takes at least 1.4x")
    assert timings.claims == [made]
    with pytest.raises(claims.ClaimFailed, match="'10 ms takes at least 1x' does not hold: 10 ms"):
        timings.claim("10 ms", "20 ms", at_least=1.0, says="10 ms takes at least 1x")


def _timings(**medians: float) -> bench.Timings:
    wall = {name.replace("_", " "): [seconds] * 3 for name, seconds in medians.items()}
    return bench.Timings(wall=wall, cpu=wall, faults={name: [0.0] * 3 for name in wall})


def test_a_quiet_control_judges_the_stated_interval() -> None:
    timings = _timings(a=1.0, b=1.45, **{"a (A/A)": 1.08})
    with pytest.raises(claims.ClaimFailed, match=r"outside \[1.5, inf\]$"):
        timings.claim("b", "a", at_least=1.5, says="b takes at least 1.5x the time of a")


def test_a_noisy_control_widens_the_interval_by_its_spread() -> None:
    timings = _timings(a=1.0, b=1.4, **{"a (A/A)": 1.25})
    made = timings.claim("b", "a", at_least=1.5, says="b takes at least 1.5x the time of a")
    assert made.holds and made.margin == 1.25
    assert "holds within the A/A's 1.25x" in str(made)
    with pytest.raises(claims.ClaimFailed, match="widened by the A/A's 1.25x"):
        _timings(a=1.0, b=1.1, **{"a (A/A)": 1.25}).claim(
            "b", "a", at_least=1.5, says="b takes at least 1.5x the time of a"
        )


def test_a_control_beyond_noisy_is_not_judged_and_says_so() -> None:
    timings = _timings(a=1.0, b=0.5, **{"a (A/A)": 1.6})
    with pytest.warns(claims.NoisyMachine, match="reads 1.600, beyond 1.0 ± 0.5"):
        made = timings.claim("b", "a", at_least=1.5, says="b takes at least 1.5x the time of a")
    assert not made.judged and "not judged" in str(made)


def test_the_strict_control_check_still_refuses_noise() -> None:
    with pytest.raises(claims.UnreliableBenchmark, match="reads 1.250, not 1.0"):
        claims.check_control(_timings(a=1.0, **{"a (A/A)": 1.25}))


def test_timings_without_a_control_cannot_make_claims() -> None:
    with pytest.raises(claims.UnreliableBenchmark, match="expected one A/A control"):
        _timings(a=1.0, b=2.0).claim(
            "b", "a", at_least=1.5, says="b takes at least 1.5x the time of a"
        )


def test_claims_are_logged_for_the_bench_command(tmp_path, monkeypatch) -> None:
    log = tmp_path / "claims.jsonl"
    monkeypatch.setenv(claims.LOG_ENV, str(log))
    _timings(a=1.0, b=2.0, **{"a (A/A)": 1.02}).claim(
        "b", "a", at_least=1.5, says="b takes at least 1.5x"
    )
    (entry,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert (entry["says"], entry["ratio"], entry["holds"]) == ("b takes at least 1.5x", 2.0, True)


def test_claims_on_cpu_time_read_the_cpu_samples() -> None:
    timings = bench.Timings(
        wall={"a": [1.0], "a (A/A)": [1.0], "b": [9.0]},
        cpu={"a": [2.0], "a (A/A)": [2.0], "b": [1.0]},
        faults={"a": [0.0], "a (A/A)": [0.0], "b": [0.0]},
    )
    on_cpu = timings.on_cpu()
    assert on_cpu.ratio("a", "b") == 2.0 and timings.ratio("a", "b") == 1 / 9
    assert on_cpu.claim("a", "b", at_least=1.5, says="a uses at least 1.5x the CPU").holds


def test_a_timing_whose_control_is_off_is_timed_again(monkeypatch) -> None:
    """A burst of load during one timing: the A/A control reads 1.5, so interleave throws
    that timing away and times the rounds again."""
    controls = iter([1.5, 1.0])

    def fake_rounds(variants, names, order, rounds, min_seconds, calls_per_round):
        aa = next(controls)
        wall = {"a": [1.0], "b": [2.0], "a (A/A)": [aa]}
        return Timings(wall=wall, cpu=wall, faults={n: [0.0] for n in wall}, meta={})

    monkeypatch.setattr(_timing, "_timed_rounds", fake_rounds)  # where interleave looks it up
    timings = bench.interleave({"a": lambda: 0, "b": lambda: 0}, warmup=0)
    assert timings.meta["attempts"] == 2 and timings.wall["a (A/A)"] == [1.0]
    assert timings.claim("b", "a", at_least=1.5, says="b takes at least 1.5x").holds


def test_a_claim_must_state_its_interval_and_bound_something() -> None:
    """The break that stayed green: an interval widened to nothing. Each bound must be
    written in the sentence, and [0, inf] is refused."""
    timings = _timings(a=1.0, b=2.0, **{"a (A/A)": 1.0})
    with pytest.raises(ValueError, match="bounds nothing"):
        timings.claim("b", "a", at_least=0, says="b takes at least 1.5x the time of a")
    with pytest.raises(ValueError, match="does not state its bound 1.2"):
        timings.claim("b", "a", at_least=1.2, says="b takes at least 1.5x the time of a")
    with pytest.raises(ValueError, match="does not state its bound 3"):
        timings.claim("b", "a", at_least=1.5, at_most=3, says="b takes at least 1.5x a")
    assert timings.claim("b", "a", at_least=1.5, says="b takes at least 1.5x a").holds


def test_the_a_a_twin_never_runs_right_after_its_original() -> None:
    """The twin sits in the middle of a round: in every rotation, each copy of the first
    variant follows another variant, so the control compares like with like."""
    order = _timing._timing_order(["a", "b", "c", "d", "copy", "a (A/A)"], control=True)
    assert order == ["a", "b", "c", "a (A/A)", "d", "copy"]
    for shift in range(len(order)):
        rotated = order[shift:] + order[:shift]
        pairs = set(zip(rotated, rotated[1:] + rotated[:1]))
        assert ("a", "a (A/A)") not in pairs and ("a (A/A)", "a") not in pairs
    assert _timing._timing_order(["a", "a (A/A)"], control=True) == ["a", "a (A/A)"]
