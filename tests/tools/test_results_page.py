"""benchmarks/README.md is generated from benchmarks/results.jsonl by
benchmarks/report.py: the committed page must be what its data gives, every
line must carry the fields the page is built from, every note and curve the
page links must exist, and record() must append one well-formed line."""

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def load_report():
    spec = importlib.util.spec_from_file_location("report", BENCHMARKS / "report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


report = load_report()


def test_the_committed_page_is_what_the_committed_data_gives():
    # On failure: run `python benchmarks/report.py` and commit the page with its data.
    assert (BENCHMARKS / "README.md").read_text() == report.render(BENCHMARKS / "results.jsonl")


def test_every_line_has_the_fields_of_its_kind():
    machines, benchmarks, figures = report.load(BENCHMARKS / "results.jsonl")
    assert machines and benchmarks and figures
    for entry in machines.values():
        assert set(report.MACHINE_FIELDS) <= set(entry), entry
    ids = {entry["id"] for entry in benchmarks}
    for entry in benchmarks:
        assert set(report.BENCHMARK_FIELDS) <= set(entry), entry
    for figure in figures:
        assert set(report.FIGURE_FIELDS) <= set(figure), figure
        assert figure["benchmark"] in ids and figure["machine"] in machines, figure
        assert figure["better"] in ("higher", "lower"), figure
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", figure["date"]), figure
        if figure["values"] is None:  # only a median was kept: it says so, and how many runs it had
            assert isinstance(figure["median"], (int, float)) and "n" in figure, figure
        else:
            assert figure["values"] and all(v is None or isinstance(v, (int, float)) for v in figure["values"])
            assert figure["failures"] >= sum(v is None for v in figure["values"]), figure
        if figure["peer"] is not None:
            report.find_peer(figure, figures)  # raises unless exactly one peer row


def test_every_linked_note_and_curve_exists():
    page = (BENCHMARKS / "README.md").read_text()
    targets = re.findall(r"\]\(([^)#]+)\)", page)
    assert any(t.startswith("notes/") for t in targets) and any(t.startswith("curves/") for t in targets)
    for target in targets:
        assert (BENCHMARKS / target).exists(), target


def test_the_notes_links_resolve_from_their_folder():
    for note in (BENCHMARKS / "notes").glob("*.md"):
        for target in re.findall(r"\]\(([^)#]+)\)", note.read_text()):
            if "://" not in target:
                assert (note.parent / target).exists(), (note.name, target)


@pytest.fixture(params=["results.jsonl", "deeper/results copy.jsonl"])
def results_copy(tmp_path, request):
    path = tmp_path / request.param
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(BENCHMARKS / "results.jsonl", path)
    return path


def test_record_appends_one_whole_well_formed_line(results_copy):
    before = results_copy.read_text().splitlines()
    run = "2026-01-02T03:04:05Z"  # the contender's peer is the figure of the same run, not an older one
    report.record("training", "a peer", "time to 475", "s", [9.0], better="lower", run=run, path=results_copy)
    report.record("training", "a contender", "time to 475", "s", [0.7, None, 0.8], better="lower",
                  peer="a peer", run=run, path=results_copy)
    after = results_copy.read_text().splitlines()
    assert after[:len(before)] == before
    added = [json.loads(line) for line in after[len(before):]]
    figure = added[-1]
    assert figure["run"] == run and report.find_peer(figure, report.load(results_copy)[2])["row"] == "a peer"
    assert figure["kind"] == "figure" and set(report.FIGURE_FIELDS) <= set(figure)
    assert figure["values"] == [0.7, None, 0.8] and figure["failures"] == 1
    assert figure["note"] == "notes/2026-11-26-cartpole-training.md"  # the benchmark's note by default
    machines, _, figures = report.load(results_copy)
    assert figure["machine"] in machines and figures[-1] == figure
    assert "a contender" in report.render(results_copy)  # the page takes the new figure


def test_record_refuses_an_unknown_benchmark_and_a_direction_it_does_not_know(results_copy):
    with pytest.raises(ValueError, match="no benchmark"):
        report.record("no such benchmark", "row", "metric", "s", [1.0], better="lower", path=results_copy)
    with pytest.raises(ValueError, match="better"):
        report.record("training", "row", "metric", "s", [1.0], better="faster", path=results_copy)
    assert results_copy.read_text() == (BENCHMARKS / "results.jsonl").read_text()


def test_a_figure_changed_in_the_data_changes_the_page(results_copy):
    lines = results_copy.read_text().splitlines()
    figure = json.loads(lines[-1])
    figure["remark"] = "a remark changed in the data"
    results_copy.write_text("\n".join(lines[:-1] + [json.dumps(figure)]) + "\n")
    assert report.render(results_copy) != (BENCHMARKS / "README.md").read_text()


def test_a_bench_script_run_with_record_appends_its_figures(tmp_path):
    # The cheapest wired script, its smallest settings: the lines it appends
    # carry the page's row labels, metrics and peers, so the page takes them.
    results_copy = tmp_path / "results.jsonl"
    shutil.copy(BENCHMARKS / "results.jsonl", results_copy)
    before_committed = (BENCHMARKS / "results.jsonl").read_text()
    before = results_copy.read_text().splitlines()
    done = subprocess.run([sys.executable, "bench_replay.py", "--repeats", "1", "--samples", "2", "--kinds", "vector",
                           "--record", "--results", str(results_copy)], cwd=BENCHMARKS, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    after = results_copy.read_text().splitlines()
    assert after[:len(before)] == before
    added = [json.loads(line) for line in after[len(before):]]
    figures = [line for line in added if line["kind"] == "figure"]
    assert {(f["row"], f["metric"]) for f in figures} >= {
        ("rlpytorch uniform, 4 float32, 100k", "insert"), ("SB3 ReplayBuffer, 4 float32, 100k", "memory")}
    ours = next(f for f in figures if f["row"] == "rlpytorch uniform, 4 float32, 100k" and f["metric"] == "sample")
    assert ours["peer"] == "SB3 ReplayBuffer, 4 float32, 100k" and ours["unit"] == "transitions/s"
    assert len(ours["values"]) == 1 and ours["values"][0] > 0 and len({f["run"] for f in figures}) == 1
    assert ours["command"] == "python benchmarks/bench_replay.py --repeats 1 --samples 2 --kinds vector"
    assert "rlpytorch prioritized, 4 float32, 100k" in report.render(results_copy)
    assert (BENCHMARKS / "results.jsonl").read_text() == before_committed  # the committed data untouched
