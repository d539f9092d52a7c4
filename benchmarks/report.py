"""The benchmarks' one reporter: figures in, results page out.

``record(...)`` appends one measured figure to ``benchmarks/results.jsonl``
(or to ``$ELF_BENCH_RESULTS``, so that tests and trials leave the committed
data alone). Bench scripts print their figures and record them through
``publish(figures, args)``, behind the ``--record`` flag ``add_options``
gives them, so that casual runs append nothing. ``python benchmarks/report.py`` regenerates
``benchmarks/README.md`` from that file;
``tests/tools/test_results_page.py`` fails when the committed page is not what
the committed data gives, so the page cannot drift from its data.

``results.jsonl`` holds one JSON object a line, of three kinds:

- ``{"kind": "machine", "id", "cpu", "cores", "gpu", "about"}``: an entry of
  the machine table, named by figures;
- ``{"kind": "benchmark", "id", "title", "about", "note", "curve"}``: one
  section of the page, in the order of these lines; ``note`` and ``curve`` are
  paths relative to ``benchmarks/`` (``curve`` may be null);
- ``{"kind": "figure", ...}``: one measured figure, the fields of
  ``FIGURE_FIELDS``: its benchmark, the row label (config or contender), the
  metric, its unit, which way is better, the value of every repeat or seed
  (``null`` for a run that gave none; ``failures`` counts the runs that failed
  or missed their target, which may still carry a value, e.g. a whole budget),
  the peer row it is compared with (same benchmark, metric, date and machine),
  an optional reference (a published figure or a goal), the machine, date,
  commit, command, versions and the note that tells its story (figures
  recorded by a bench script also carry ``run``, the UTC time of the run, so
  that two runs on one day keep their peers apart). Where a note
  gave only a median, ``values`` is null and ``median`` and ``n`` (or null)
  say what was given: the spread is unknown.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

from elfpy.files import append_line, write_text_atomically

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results.jsonl"
PAGE = HERE / "README.md"
RESULTS_ENV = "ELF_BENCH_RESULTS"  # another results file for record(): tests and trials point it at a copy

FIGURE_FIELDS = ("benchmark", "row", "metric", "unit", "better", "values", "failures", "peer", "reference",
                 "machine", "date", "commit", "command", "versions", "note")
MACHINE_FIELDS = ("id", "cpu", "cores", "gpu", "about")
BENCHMARK_FIELDS = ("id", "title", "about", "note", "curve")
# libraries whose versions a figure keeps, when the recording process has imported them
VERSIONED = ("numpy", "torch", "gymnasium", "stable_baselines3", "envpool", "pyspiel")


def load(path=RESULTS):
    """The lines of ``path``: (machines by id, benchmarks in order, figures in order)."""
    machines, benchmarks, figures = {}, [], []
    for number, text in enumerate(Path(path).read_text().splitlines(), 1):
        line = json.loads(text)
        if line["kind"] == "machine":
            machines[line["id"]] = line
        elif line["kind"] == "benchmark":
            benchmarks.append(line)
        elif line["kind"] == "figure":
            figures.append(line)
        else:
            raise ValueError(f"{path}:{number}: unknown kind {line['kind']!r}")
    return machines, benchmarks, figures


# --- recording ---------------------------------------------------------------

def this_machine():
    """cpu, cores and gpu of the machine running now (gpu: only if torch is
    already imported and sees one; importing it here would cost seconds)."""
    if str(HERE) not in sys.path:  # cpu_info sits beside this file, as for the bench scripts
        sys.path.insert(0, str(HERE))
    from cpu_info import cpu_name
    gpu = None
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        gpu = torch.cuda.get_device_name(0)
    return {"cpu": cpu_name(), "cores": os.cpu_count(), "gpu": gpu}


def machine_id(path, machine):
    """The id of ``machine`` in the table of ``path``, appending a new entry if it has none."""
    machines = load(path)[0]
    for entry in machines.values():
        if (entry["cpu"], entry["cores"], entry["gpu"]) == (machine["cpu"], machine["cores"], machine["gpu"]):
            return entry["id"]
    name = f"{machine['cpu']} {machine['cores']}c {machine['gpu'] or ''}".lower()
    new_id = "-".join("".join(c if c.isalnum() else " " for c in name).split())
    append_line(path, json.dumps({"kind": "machine", "id": new_id, **machine, "about": "added by record()"}))
    return new_id


def current_commit():
    """The short commit of the checkout, with ``+`` when its files differ from it."""
    def git(*args):
        return subprocess.run(["git", "-C", str(HERE), *args], capture_output=True, text=True).stdout.strip()
    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    return commit + ("+" if git("status", "--porcelain", "--untracked-files=no") else "")


def this_command():
    """The command line that reproduces this run: the script as a path from the
    repository's root, without the options that only say where figures go."""
    argv = list(sys.argv)
    if argv and argv[0].endswith(".py"):
        argv[0] = os.path.relpath(Path(argv[0]).resolve(), HERE.parent)
    kept, skip = [], False
    for word in argv:
        if skip or word in ("--record", "--no-record") or word.startswith("--results="):
            skip = False
            continue
        skip = word == "--results"
        if not skip:
            kept.append(word)
    return shlex.join(["python", *kept])


def versions():
    found = {"python": sys.version.split()[0]}
    for name in VERSIONED:
        module = sys.modules.get(name)
        if module is not None and hasattr(module, "__version__"):
            found[name] = str(module.__version__)
    return found


def results_file():
    """Where figures go unless told: ``$ELF_BENCH_RESULTS``, else the committed ``results.jsonl``."""
    return Path(os.environ.get(RESULTS_ENV) or RESULTS)


def new_figure(benchmark, row, metric, unit, values, *, better, failures=None, peer=None, reference=None,
               command=None, run=None):
    """A figure as a bench script measured it; ``machine`` and ``note`` are
    left for record() to fill in from the results file."""
    if better not in ("higher", "lower"):
        raise ValueError(f"better must be 'higher' or 'lower', not {better!r}")
    values = list(values)
    return {
        "kind": "figure", "benchmark": benchmark, "row": row, "metric": metric, "unit": unit,
        "better": better, "values": values,
        "failures": sum(v is None for v in values) if failures is None else failures,
        "peer": peer, "reference": reference, "machine": None,
        "date": time.strftime("%Y-%m-%d", time.gmtime()), "commit": current_commit(),
        "command": command or this_command(), "versions": versions(), "note": None,
        "run": run or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def record(benchmark, row, metric, unit, values, *, better, failures=None, peer=None, reference=None,
           note=None, command=None, run=None, path=None):
    """Append one figure to ``path`` (default: results_file()) as one whole
    line. ``values``: one number per repeat or seed, None for a run that gave
    none; ``failures`` defaults to the number of Nones. ``better``: "higher"
    or "lower". ``note`` defaults to the benchmark's note. The machine, date
    (UTC), commit, command line, library versions and ``run`` (the time, UTC;
    figures of one run share it) are filled in here."""
    path = Path(path or results_file())
    figure = new_figure(benchmark, row, metric, unit, values, better=better, failures=failures, peer=peer,
                        reference=reference, command=command, run=run)
    sections = {entry["id"]: entry for entry in load(path)[1]}
    if benchmark not in sections:
        raise ValueError(f"{path} has no benchmark {benchmark!r}: add its benchmark line first")
    figure["machine"] = machine_id(path, this_machine())
    figure["note"] = note or sections[benchmark]["note"]
    append_line(path, json.dumps(figure))


# --- what bench scripts share ------------------------------------------------

def add_options(parser):
    """--record and --results, the options every bench script that publishes takes."""
    parser.add_argument("--record", action=argparse.BooleanOptionalAction, default=False,
                        help="append this run's figures to the results file (a run without it appends nothing)")
    parser.add_argument("--results", type=Path, default=None,
                        help=f"the results file --record appends to (default: ${RESULTS_ENV}, else "
                             "benchmarks/results.jsonl)")


def publish(figures, args):
    """Print the figures of one run as the page's table shows them and, with
    ``args.record``, append each to ``args.results`` (or results_file()).
    ``figures``: dicts of new_figure()'s arguments. A peer this run did not
    measure (a library left out) is dropped, with a reference measured
    against it: the page compares only figures of the same run. Returns the
    table's text."""
    run = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    measured = {(f["row"], f["metric"]) for f in figures}
    figures = [without_missing_peer(f, measured) for f in figures]
    drafts = [new_figure(**f, run=run) for f in figures]
    for draft in drafts:
        draft["machine"] = "this machine"
    runs = {run_key(draft): "this run" for draft in drafts}
    text = "\n".join(TABLE_HEAD + [figure_row(draft, drafts, runs)[0] for draft in drafts])
    print(text, flush=True)
    if args.record:
        path = args.results or results_file()
        for figure in figures:
            record(**figure, run=run, path=path)
        print(f"recorded {len(figures)} figure{'s' if len(figures) != 1 else ''} in {path}")
    return text


def without_missing_peer(figure, measured):
    if figure.get("peer") is None or (figure["peer"], figure["metric"]) in measured:
        return figure
    reference = figure.get("reference")
    return {**figure, "peer": None, "reference": None if reference and "ratio" in reference else reference}


# --- the page ----------------------------------------------------------------

def number(x):
    """A figure as the page prints it."""
    if x is None:
        return "-"
    if abs(x) >= 1e6:
        return f"{x / 1e6:.2f}M"
    if abs(x) >= 1000 or x == int(x):
        return f"{x:,.0f}"
    return f"{x:.4g}"


def summary(figure):
    """(median, low, high, n) of a figure; low and high None where the spread is unknown."""
    if figure["values"] is None:
        return figure["median"], None, None, figure["n"]
    given = [v for v in figure["values"] if v is not None]
    if not given:
        return None, None, None, len(figure["values"])
    return statistics.median(given), min(given), max(given), len(figure["values"])


def times_better(figure, mine, theirs):
    """How many times better ``mine`` is than ``theirs`` (>1: better), or None when not both positive."""
    if mine is None or theirs is None or mine <= 0 or theirs <= 0:
        return None
    return mine / theirs if figure["better"] == "higher" else theirs / mine


def ratio_text(ratio):
    return f"{ratio:.3g}x"


def find_peer(figure, figures):
    """The peer's figure: same benchmark, metric, date, machine and run (for
    figures that carry one), row = figure's peer."""
    found = [f for f in figures if f["row"] == figure["peer"] and f.get("run") == figure.get("run") and
             all(f[key] == figure[key] for key in ("benchmark", "metric", "date", "machine"))]
    if len(found) != 1:
        raise ValueError(f"{figure['row']}, {figure['metric']}: {len(found)} peers named {figure['peer']!r}")
    return found[0]


def comparison(figure, figures):
    """(the 'vs peer' cell, the ratio or None)."""
    if figure["peer"] is None:
        return "", None
    mine, theirs = summary(figure)[0], summary(find_peer(figure, figures))[0]
    ratio = times_better(figure, mine, theirs)
    if ratio is not None:
        return f"{ratio_text(ratio)} {figure['peer']}", ratio
    if mine is None or theirs is None:
        return f"? {figure['peer']}", None
    return f"{mine - theirs:+.4g} vs {figure['peer']}", None  # returns below zero: a difference


def reference_check(figure, ratio):
    """(the reference as the page names it, whether it is reached)."""
    reference, median = figure["reference"], summary(figure)[0]
    if "ratio" in reference:
        reached = ratio is not None and ratio >= reference["ratio"]
        return f"{reference['ratio']:g}x peer ({reference['label']})", reached
    higher = figure["better"] == "higher"
    reached = median is not None and (median >= reference["value"] if higher else median <= reference["value"])
    return f"{number(reference['value'])} ({reference['label']})", reached


def figure_row(figure, figures, runs):
    """(the table row of a figure, its 'open' line or None)."""
    median, low, high, n = summary(figure)
    if figure["values"] is None:
        spread = "not recorded"
    elif n == 1:
        spread = "-"  # one run: no spread
    else:
        spread = f"{number(low)}{' to ' if low < 0 else '-'}{number(high)}"  # "-17 to -15", not "-17--15"
    median_text = number(median) + (f" ({figure['statistic']})" if figure.get("statistic") else "")
    versus, ratio = comparison(figure, figures)
    reference, open_line = "", None
    if figure["reference"]:
        named, reached = reference_check(figure, ratio)
        reference = f"{named}: {'met' if reached else 'open'}"
        if not reached:
            got = versus.split(" ", 1)[0] if "ratio" in figure["reference"] else median_text
            open_line = f"{figure['row']}, {figure['metric']}: {got} where the reference is {named}"
    metric = f"{figure['metric']} ({figure['unit']})" if figure["unit"] else figure["metric"]
    cells = [figure["row"], metric, median_text, spread, "?" if n is None else str(n), str(figure["failures"]),
             versus, reference, runs[run_key(figure)]]
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |", open_line


def run_key(figure):
    return figure["date"], figure["commit"], figure["machine"], figure["command"], figure.get("run")


TABLE_HEAD = ["| row | metric | median | min-max | n | failed | vs peer (>1: better) | reference | run |",
              "|---|---|---:|---:|---:|---:|---|---|---|"]


def section(benchmark, figures, machines):
    """The lines of one benchmark's section."""
    mine = [f for f in figures if f["benchmark"] == benchmark["id"]]
    runs = {}
    for figure in mine:
        runs.setdefault(run_key(figure), f"r{len(runs) + 1}")
    notes = sorted({f["note"] for f in mine} | {benchmark["note"]})
    links = ", ".join(f"[{Path(n).name}]({n})" for n in notes)
    curve = f"; curve: [{Path(benchmark['curve']).name}]({benchmark['curve']})" if benchmark["curve"] else ""
    lines = [f"## {benchmark['title']}", "", f"{benchmark['about']} Notes: {links}{curve}.", "", *TABLE_HEAD]
    opens, remarks = [], []
    for figure in mine:
        text, open_line = figure_row(figure, figures, runs)
        lines.append(text)
        if open_line:
            opens.append(open_line)
        if figure.get("remark"):
            remarks.append(f"{figure['row']}, {figure['metric']}: {figure['remark']}")
    for (date, commit, machine, command, _), name in runs.items():  # a list ends the table (no blank line)
        gpu = machines[machine]["gpu"]
        where = f"`{machine}`" + (f" ({gpu}: another machine)" if gpu else "")
        lines.append(f"- {name}: {date}, commit `{commit}`, {where}: `{command}`")
    if remarks:
        lines.append("- remarks: " + "; ".join(remarks) + ".")
    lines += [f"- **open**: {text}" for text in opens]
    return lines + [""]


HEADER = """# Benchmarks: results

Generated by `python benchmarks/report.py` from `benchmarks/results.jsonl`; do
not edit by hand (`tests/tools/test_results_page.py` fails when page and data
differ). The story behind each figure, the earlier runs and the settings tried
are in the dated [notes](notes/) linked from each section; notes with no table
here: soak, previous action and reward as inputs, PPO on the pendulum, the CPU
before/after round, the old page's introduction (each script's options).

**Reproduce.** `pip install -e . --no-build-isolation`, plus the libraries
compared against (`pip install envpool==1.2.5 gymnasium==1.4.0
stable-baselines3`); then a run's command (`r1`, ...). A bench script run
with `--record` appends its figures to `results.jsonl` (`--results PATH` or
`$ELF_BENCH_RESULTS` for another file; a run without it appends nothing),
one whole line each through `report.record()`; `python benchmarks/report.py`
then rewrites this page.

**Method.** Contenders run interleaved (all on repeat or seed 0, then 1, ...,
the order rotating), torch and BLAS on one thread unless the command says
otherwise. A figure is the median of its repeats or seeds, with their min-max
and number n ("not recorded": the run kept only its median). Every run
counts: "failed" counts the runs that failed or missed their target; one that
still gave a value (a run to a target counts at its whole budget) is in the
median. "vs peer": the ratio of medians against the peer row of the same day
and machine, turned so that above 1 is better (returns below zero: the
difference). CPU seconds (`os.times()`, children included) sit beside wall
seconds where a run recorded them: the machines are small and often shared.
A reference is a published figure or a goal, not a same-run peer; "open"
marks one not reached.
"""


def header(machines, figures):
    lines = HEADER.splitlines() + ["", "**Machines.**", "", "| id | cpu | cores | gpu | about |",
                                   "|---|---|---:|---|---|"]
    for entry in machines.values():
        lines.append(f"| `{entry['id']}` | {entry['cpu']} | {entry['cores']} | {entry['gpu'] or '-'} | "
                     f"{entry['about']} |")
    seen = {}
    for figure in figures:
        for name, version in figure["versions"].items():
            seen.setdefault(name, set()).add(version)
    listed = "; ".join(f"{name} {', '.join(sorted(found))}" for name, found in sorted(seen.items()))
    lines += ["", f"**Versions** recorded with the runs: {listed}. Runs without recorded versions: "
              "those of their notes.", ""]
    return lines


def render(path=RESULTS):
    """The page for the data in ``path``."""
    machines, benchmarks, figures = load(path)
    lines = header(machines, figures)
    for benchmark in benchmarks:
        lines += section(benchmark, figures, machines)
    return "\n".join(lines) + "\n"


def main():
    write_text_atomically(PAGE, render())
    print(f"wrote {PAGE} ({len(PAGE.read_text().splitlines())} lines)")


if __name__ == "__main__":
    main()
