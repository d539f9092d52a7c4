"""benchmarks/README.md is generated from benchmarks/results.jsonl by
benchmarks/report.py: the committed page must be what its data gives, one row
per claim and metric within 250 lines, every line must carry the fields the
page is built from, every summary and curve the page links must exist, a claim
must pool its seeds once each, and record() must append one well-formed line."""

import importlib.util
import json
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
SUMMARIES = BENCHMARKS.parent / "docs" / "results"


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
    machines, benchmarks, figures, claim_lines = report.load(BENCHMARKS / "results.jsonl")
    assert machines and benchmarks and figures and claim_lines
    for entry in machines.values():
        assert set(report.MACHINE_FIELDS) <= set(entry), entry
    ids = {entry["id"] for entry in benchmarks}
    for entry in benchmarks:
        assert set(report.BENCHMARK_FIELDS) <= set(entry), entry
        report.claims(entry, figures, claim_lines)  # raises on a claim naming a row with no figure, or no peer
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
    for line in claim_lines:
        assert set(report.CLAIM_FIELDS) <= set(line) and line["benchmark"] in ids and line["pools"], line


def page_rows(page):
    """(section, claim, metric) of every table row of the page but the machines'."""
    rows, section = [], None
    for line in page.splitlines():
        if line.startswith("## "):
            section = line[3:]
        elif section and line.startswith("| ") and not line.startswith("| claim |"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            rows.append((section, cells[0], cells[1]))
    return rows


def test_the_page_shows_one_row_per_claim_within_250_lines():
    page = (BENCHMARKS / "README.md").read_text()
    assert len(page.splitlines()) <= 250
    rows = page_rows(page)
    assert rows and len(rows) == len(set(rows))
    td3 = [r for r in rows if r[1] == "rlpytorch TD3, the shipped config, HalfCheetah-v5"]
    assert len(td3) == 4  # every seed of the shipped config in one row per metric, not one row per batch of seeds


def test_every_linked_summary_and_curve_exists():
    page = (BENCHMARKS / "README.md").read_text()
    targets = re.findall(r"\]\(([^)#]+)\)", page)
    assert any(t.startswith("../docs/results/") for t in targets) and any(t.startswith("curves/") for t in targets)
    for target in targets:
        assert (BENCHMARKS / target).exists(), target
    linked = {(BENCHMARKS / t).resolve() for t in targets}
    for curve in (BENCHMARKS / "curves").glob("*.png"):  # a curve nothing shows has left the tree
        shown = curve.resolve() in linked or any(f"curves/{curve.name}" in summary.read_text()
                                                  for summary in SUMMARIES.glob("*.md"))
        assert shown, curve.name


def test_the_summaries_links_resolve_from_their_folder():
    for summary in SUMMARIES.glob("*.md"):
        assert len(summary.read_text().splitlines()) <= 150, summary.name
        for target in re.findall(r"\]\(([^)#]+)\)", summary.read_text()):
            if "://" not in target:
                assert (summary.parent / target).exists(), (summary.name, target)


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
    assert figure["note"] == "../docs/results/2026-11-26-cartpole-training.md"  # the benchmark's summary by default
    machines, _, figures, _ = report.load(results_copy)
    assert figure["machine"] in machines and figures[-1] == figure
    assert "a contender" in report.render(results_copy)  # the page takes the new figure


def test_record_refuses_an_unknown_benchmark_and_a_direction_it_does_not_know(results_copy):
    with pytest.raises(ValueError, match="no benchmark"):
        report.record("no such benchmark", "row", "metric", "s", [1.0], better="lower", path=results_copy)
    with pytest.raises(ValueError, match="better"):
        report.record("training", "row", "metric", "s", [1.0], better="faster", path=results_copy)
    assert results_copy.read_text() == (BENCHMARKS / "results.jsonl").read_text()


def lines_of(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_lines(path, lines):
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_a_figure_changed_in_the_data_changes_the_page(results_copy):
    lines = lines_of(results_copy)
    figure = next(line for line in lines if line["kind"] == "figure" and line["row"] == "rlpytorch cartpole_fast.yaml")
    figure["values"] = [v * 2 for v in figure["values"]]
    write_lines(results_copy, lines)
    assert report.render(results_copy) != (BENCHMARKS / "README.md").read_text()


def claim_summary(path, benchmark, row, metric):
    """(median, n, the peer's median) of the page's claim ``row``, ``metric``."""
    machines, benchmarks, figures, claim_lines = report.load(path)
    section = next(entry for entry in benchmarks if entry["id"] == benchmark)
    claim = next(c for c in report.claims(section, figures, claim_lines) if (c["row"], c["metric"]) == (row, metric))
    median, _, _, n = report.summary(claim)
    return median, n, report.summary(claim["peer_claim"])[0] if claim["peer_claim"] else None


SHIPPED, SB3 = "rlpytorch TD3, the shipped config, HalfCheetah-v5", "SB3 TD3 (rl-zoo), HalfCheetah-v5"
RETURN = "deterministic return, 10 episodes"


def test_a_claim_pools_each_seed_of_its_runs_once(results_copy):
    machines, benchmarks, figures, claim_lines = report.load(results_copy)
    line = next(c for c in claim_lines if c["row"] == SB3)
    recorded = [f for f in figures if f["row"] in line["pools"] + line["within"] and f["metric"] == RETURN]
    latest = {f["row"]: f["values"] for f in recorded}  # a row recorded again as the peer of each later run
    pooled = [v for row in line["pools"] for v in latest[row]]
    assert len(pooled) == 22 < sum(len(f["values"]) for f in recorded)  # seeds 0-21, each once
    median, n, _ = claim_summary(results_copy, "offpolicy", SB3, RETURN)
    assert (median, n) == (statistics.median(pooled), 22)
    ours, n, theirs = claim_summary(results_copy, "offpolicy", SHIPPED, RETURN)
    assert n == 16 and theirs == median and round(ours) == 6858


def test_a_row_run_again_replaces_the_earlier_run_on_the_page(results_copy):
    run = "2026-01-02T03:04:05Z"
    report.record("training", "Stable-Baselines3 PPO rl-zoo", "time to 475", "s", [20.0, 20.0], better="lower",
                  run=run, path=results_copy)
    report.record("training", "rlpytorch cartpole_fast.yaml", "time to 475", "s", [1.0, 1.0], better="lower",
                  peer="Stable-Baselines3 PPO rl-zoo", run=run, path=results_copy)
    assert claim_summary(results_copy, "training", "rlpytorch cartpole_fast.yaml", "time to 475") == (1.0, 2, 20.0)
    rows = page_rows(report.render(results_copy))
    assert ("Training", "rlpytorch cartpole_fast.yaml", "time to 475 (s)") in rows
    assert not any(r[1] == "Stable-Baselines3 PPO rl-zoo" for r in rows)  # a peer is told in the row citing it


def test_a_claim_off_the_page_leaves_its_rows_in_the_record_only(results_copy):
    lines = lines_of(results_copy)
    line = next(c for c in lines if c["kind"] == "claim" and c["row"] == SHIPPED)
    line["off_page"] = "a test"
    write_lines(results_copy, lines)
    rows = page_rows(report.render(results_copy))
    assert not any(SHIPPED in r[1] or "shipped config (the critic loss" in r[1] for r in rows)
    del line["off_page"]
    line["pools"].append("no such row")
    write_lines(results_copy, lines)
    with pytest.raises(ValueError, match="pools rows with no figure"):
        report.render(results_copy)


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


def test_the_commit_is_marked_changed_by_code_not_by_the_figures_appended(tmp_path):
    # record() appends to the committed results file: a run's later figures
    # are of the same code as its first, so only other files' changes add "+".
    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "results.jsonl").write_text("{}\n")
    (tmp_path / "engine.cc").write_text("int main() {}\n")
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    head = subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    assert report.current_commit(tmp_path) == head
    with open(tmp_path / "benchmarks" / "results.jsonl", "a") as results:
        results.write("{}\n")
    assert report.current_commit(tmp_path) == head
    (tmp_path / "engine.cc").write_text("int main() { return 1; }\n")
    assert report.current_commit(tmp_path) == head + "+"
