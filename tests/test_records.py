"""casebook.bench.records: stored benchmark runs and the "measured on" table."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")

import pytest

from casebook.bench import Timings, records

READS_PAGES = False


def _timings(device: str, backend: str, scale: float) -> Timings:
    wall = {"fix A": [1e-3 * scale, 2e-3 * scale, 3e-3 * scale], "fix B": [4e-3 * scale] * 3}
    meta = {"device": device, "backend": backend, "jax": "0.10.2", "date": "2026-11-21T09:00:00"}
    return Timings(wall=wall, cpu=wall, faults={k: [0.0] * 3 for k in wall}, meta=meta)


def test_save_load_round_trip_one_file_per_device(tmp_path):
    cpu = _timings("cpu: Test CPU (2 cores)", "cpu", 1.0)
    path = records.save(cpu, "case-1", "merge", store=tmp_path, package_versions={"jax": "0.10.2"})
    assert path == tmp_path / "case-1" / "merge" / "cpu-cpu-test-cpu-2-cores.json"
    assert json.loads(path.read_text())["meta"]["versions"] == {"jax": "0.10.2"}
    records.save(_timings("cpu: Test CPU (2 cores)", "cpu", 2.0), "case-1", "merge", store=tmp_path)
    gpu = _timings("gpu: NVIDIA H100", "gpu", 0.01)
    records.save(gpu, "case-1", "merge", store=tmp_path)
    loaded = records.load("case-1", "merge", store=tmp_path)
    assert [t.meta["backend"] for t in loaded] == ["cpu", "gpu"]  # same device replaced
    assert loaded[0].median("fix A") == pytest.approx(4e-3)


def test_bad_names_are_refused(tmp_path):
    with pytest.raises(ValueError, match="lower-case"):
        records.save(_timings("cpu: x", "cpu", 1.0), "Case 1", "merge", store=tmp_path)


def test_measured_on_adds_the_live_run_and_records_only_when_asked(tmp_path, monkeypatch):
    records.save(_timings("gpu: NVIDIA H100", "gpu", 0.01), "c", "b", store=tmp_path)
    live = _timings("cpu: Test CPU (2 cores)", "cpu", 1.0)
    monkeypatch.delenv(records.RECORD_ENV, raising=False)
    shown = records.measured_on("c", "b", live, store=tmp_path)
    assert [s for s, _ in shown.runs] == ["stored", "this run"]
    assert len(list((tmp_path / "c" / "b").glob("*.json"))) == 1  # not recorded
    text = str(shown)
    assert "gpu: NVIDIA H100" in text and "this run" in text and "20 µs" in text
    monkeypatch.setenv(records.RECORD_ENV, "1")
    records.measured_on("c", "b", live, store=tmp_path)
    assert len(list((tmp_path / "c" / "b").glob("*.json"))) == 2


def test_measured_on_without_any_run_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="no stored or live run"):
        records.measured_on("c", "b", store=tmp_path, record=False)


def test_plot_draws_one_bar_per_run_and_variant(tmp_path):
    records.save(_timings("gpu: NVIDIA H100", "gpu", 0.01), "c", "b", store=tmp_path)
    shown = records.measured_on(
        "c", "b", _timings("cpu: T", "cpu", 1.0), store=tmp_path, record=False
    )
    ax = shown.plot()
    assert len(ax.patches) == 4 and ax.get_xscale() == "log"
    assert "<table>" in shown._repr_html_()


def test_measured_on_many_slugs_names_and_plots_one_panel_each(tmp_path):
    live = {"D = 10": _timings("cpu: T", "cpu", 1.0), "large": _timings("cpu: T", "cpu", 2.0)}
    shown = records.measured_on_many("c", live, store=tmp_path, record=True)
    assert [m.bench for m in shown] == ["d-10", "large"]
    assert (tmp_path / "c" / "d-10").is_dir() and len(shown.plot().axes) == 2
    assert shown._repr_html_().count("<table>") == 2
