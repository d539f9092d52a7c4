"""The benchmarks' one reporter: figures in, results page out.

``record(...)`` appends one measured figure to ``benchmarks/results.jsonl``
(or to ``$ELF_BENCH_RESULTS``, so that tests and trials leave the committed
data alone). Bench scripts print their figures and record them through
``publish(figures, args)``, behind the ``--record`` flag ``add_options``
gives them, so that casual runs append nothing. ``python benchmarks/report.py`` regenerates
``benchmarks/README.md`` from that file;
``tests/tools/test_results_page.py`` fails when the committed page is not what
the committed data gives, so the page cannot drift from its data.

``results.jsonl`` holds one JSON object a line, of four kinds:

- ``{"kind": "machine", "id", "cpu", "cores", "gpu", "about"}``: an entry of
  the machine table, named by figures;
- ``{"kind": "benchmark", "id", "title", "about", "note", "curve"}``: one
  section of the page, in the order of these lines; ``note`` (its dated
  summary under ``docs/results/``) and ``curve`` are paths relative to
  ``benchmarks/`` (``curve`` may be null);
- ``{"kind": "figure", ...}``: one measured figure, the fields of
  ``FIGURE_FIELDS``: its benchmark, the row label (config or contender), the
  metric, its unit, which way is better, the value of every repeat or seed
  (``null`` for a run that gave none; ``failures`` counts the runs that failed
  or missed their target, which may still carry a value, e.g. a whole budget),
  the peer row it is compared with (same benchmark, metric, date and machine),
  an optional reference (a published figure or a goal), the machine, date,
  commit, command, versions and the note that told its story when it was
  recorded (the notes of figures recorded before 2026-12-02 are in the
  history at ``eb22c8e``, their summaries under ``docs/results/``); figures
  recorded by a bench script also carry ``run``, the UTC time of the run, so
  that two runs on one day keep their peers apart. Where a note gave only a
  median, ``values`` is null and ``median`` and ``n`` (or null) say what was
  given: the spread is unknown.
- ``{"kind": "claim", "benchmark", "row", "pools", "peer"}``: one row of the
  page per metric, pooling the values of the latest figure of each row named
  in ``pools`` (a configuration run again at more seeds); ``within`` names
  rows whose seeds a pooled row holds again, ``peer`` another claim or row,
  ``references`` a bar per metric, and ``off_page`` (a reason) keeps a
  superseded configuration or a diagnostic off the page. A row that no claim
  names is a claim of its own, its latest run shown; a peer with no peer or
  reference of its own is told in the row that cites it.
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
CLAIM_FIELDS = ("benchmark", "row", "pools", "peer")
# libraries whose versions a figure keeps, when the recording process has imported them
VERSIONED = ("numpy", "torch", "gymnasium", "stable_baselines3", "envpool", "pyspiel")


def load(path=RESULTS):
    """The lines of ``path``: (machines by id, benchmarks in order, figures in order, claims)."""
    machines, benchmarks, figures, claim_lines = {}, [], [], []
    for number, text in enumerate(Path(path).read_text().splitlines(), 1):
        line = json.loads(text)
        if line["kind"] == "machine":
            machines[line["id"]] = line
        elif line["kind"] == "benchmark":
            benchmarks.append(line)
        elif line["kind"] == "figure":
            figures.append(line)
        elif line["kind"] == "claim":
            claim_lines.append(line)
        else:
            raise ValueError(f"{path}:{number}: unknown kind {line['kind']!r}")
    return machines, benchmarks, figures, claim_lines


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


def current_commit(root=HERE.parent):
    """The short commit of the checkout at ``root`` (this one unless told), with
    ``+`` when its tracked files differ from it. The committed results file is
    left out: record() appends to it, and a run's later figures are of the same
    code as its first."""
    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    commit = git("rev-parse", "--short", "HEAD").stdout.strip() or "unknown"
    changed = git("diff", "--quiet", "HEAD", "--", ".", f":(exclude,top){RESULTS.relative_to(HERE.parent)}")
    return commit + ("+" if changed.returncode == 1 else "")


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


def summary_texts(figure):
    """(the median, n, the median's text, the spread's text) of a figure or a pooled claim."""
    median, low, high, n = summary(figure)
    if figure["values"] is None:
        spread = "not recorded"
    elif n == 1:
        spread = "-"  # one run: no spread
    else:
        spread = f"{number(low)}{' to ' if low < 0 else '-'}{number(high)}"  # "-17 to -15", not "-17--15"
    return median, n, number(median) + (f" ({figure['statistic']})" if figure.get("statistic") else ""), spread


def figure_row(figure, figures, runs):
    """(the table row of a figure, its 'open' line or None)."""
    median, n, median_text, spread = summary_texts(figure)
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


def latest_figures(figures):
    """The last figure recorded of each (row, metric), in the order the pairs first appear: a run
    that repeats a row replaces it on the page, and the record keeps both."""
    latest = {}
    for figure in figures:
        latest.pop((figure["row"], figure["metric"]), None)
        latest[(figure["row"], figure["metric"])] = figure
    return sorted(latest.values(), key=lambda f: first_seen(figures, f))


def first_seen(figures, figure):
    return next(i for i, f in enumerate(figures) if (f["row"], f["metric"]) == (figure["row"], figure["metric"]))


def pool(label, metric, pooled, line):
    """The page row of a claim: the values of its pooled figures joined, one per seed or repeat."""
    first = pooled[0]
    for figure in pooled[1:]:
        if (figure["unit"], figure["better"]) != (first["unit"], first["better"]):
            raise ValueError(f"claim {label!r}, {metric}: its figures differ in unit or direction")
    if len(pooled) > 1 and any(f["values"] is None for f in pooled):
        raise ValueError(f"claim {label!r}, {metric}: a figure kept only its median, so its seeds cannot be pooled")
    references = [f["reference"] for f in pooled if f["reference"]]
    if line and metric in line.get("references", {}):  # the claim's own bar, whatever its runs recorded
        references = [line["references"][metric]]
    values = None if first["values"] is None else [v for f in pooled for v in f["values"]]
    return {
        "row": label, "metric": metric, "unit": first["unit"], "better": first["better"], "values": values,
        "median": first.get("median"), "n": first.get("n"), "statistic": first.get("statistic"),
        "failures": sum(f["failures"] for f in pooled), "reference": references[-1] if references else None,
        "figures": pooled, "peer": line["peer"] if line else first["peer"], "line": line,
    }


def claims(benchmark, figures, claim_lines):
    """Every claim of one benchmark, in the order its figures first appear. A claim line pools the
    latest figure of each row it names (``pools``; ``within``: rows whose seeds a pooled row holds
    again) under its own label; any other row is a claim of its own."""
    lines = [line for line in claim_lines if line["benchmark"] == benchmark["id"]]
    owner = {}
    for line in lines:
        for row in line["pools"] + line.get("within", []):
            if row in owner:
                raise ValueError(f"row {row!r} of benchmark {benchmark['id']!r} is in two claims")
            owner[row] = line
    mine = latest_figures([f for f in figures if f["benchmark"] == benchmark["id"]])
    found = {f["row"] for f in mine}
    for line in lines:
        missing = [row for row in line["pools"] if row not in found]
        if missing:
            raise ValueError(f"claim {line['row']!r} pools rows with no figure: {missing}")
    grouped = {}
    for figure in mine:
        line = owner.get(figure["row"])
        if line is not None and figure["row"] not in line["pools"]:
            continue  # a row of ``within``: its values are a pooled row's already
        label = line["row"] if line else figure["row"]
        grouped.setdefault((label, figure["metric"]), (line, []))[1].append(figure)
    for line, pooled in grouped.values():
        if line is not None:  # in the order the claim line names its rows
            pooled.sort(key=lambda f, line=line: line["pools"].index(f["row"]))
    made = [pool(label, metric, pooled, line) for (label, metric), (line, pooled) in grouped.items()]
    by_label = {(c["row"], c["metric"]): c for c in made}
    for claim in made:
        claim["peer_claim"] = None
        if claim["peer"] is None:
            continue
        peer_line = owner.get(claim["peer"])
        if claim["line"] is None and peer_line is None:  # a run's own peer: the figure of the same run
            claim["peer_claim"] = by_label.get((claim["peer"], claim["metric"]))
            if claim["peer_claim"] is None or claim["peer_claim"]["figures"][0] is not find_peer(
                    claim["figures"][0], figures):
                claim["peer_claim"] = pool(claim["peer"], claim["metric"], [find_peer(claim["figures"][0], figures)],
                                           None)
            continue
        key = (peer_line["row"] if peer_line else claim["peer"], claim["metric"])
        if key not in by_label:
            raise ValueError(f"claim {claim['row']!r}, {claim['metric']}: no peer {claim['peer']!r}")
        claim["peer_claim"] = by_label[key]
    return made


def shown_claims(claims_made):
    """The claims the page shows a row of: not kept off it, and not a peer with no peer or reference
    of its own (that one is told in the row of the claim that cites it)."""
    shown = [c for c in claims_made if not (c["line"] and c["line"].get("off_page"))]
    cited = {id(c["peer_claim"]) for c in shown if c["peer_claim"] is not None}
    return [c for c in shown if id(c) not in cited or c["peer_claim"] is not None or c["reference"]]


def runs_text(claim):
    """Where a claim's figures come from: one run's date and commit, or how many runs over which days."""
    runs = {run_key(f) for f in claim["figures"]}
    where = ", ".join(f"`{m}`" for m in sorted({f["machine"] for f in claim["figures"]}))
    if len(runs) == 1:
        figure = claim["figures"][0]
        return f"{figure['date']}, `{figure['commit']}`, {where}"
    dates = sorted(f["date"] for f in claim["figures"])
    days = dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"
    return f"{len(runs)} runs, {days}, {where}"


def claim_row(claim):
    """The page's row of one claim."""
    median, n, median_text, spread = summary_texts(claim)
    versus, ratio = "", None
    if claim["peer_claim"] is not None:
        theirs = summary(claim["peer_claim"])[0]
        ratio = times_better(claim, median, theirs)
        peer = claim["peer_claim"]
        _, _, _, peer_n = summary(peer)
        told = f"{peer['row']} ({number(theirs)}, n {'?' if peer_n is None else peer_n}" + (
            f", {peer['failures']} failed)" if peer["failures"] else ")")
        if ratio is not None:
            versus = f"{ratio_text(ratio)} {told}"
        elif median is None or theirs is None:
            versus = f"? {told}"
        else:
            versus = f"{median - theirs:+.4g} vs {told}"  # returns below zero: a difference
    reference = ""
    if claim["reference"]:
        named, reached = reference_check(claim, ratio)
        reference = f"{named}: {'met' if reached else '**open**'}"
    metric = f"{claim['metric']} ({claim['unit']})" if claim["unit"] else claim["metric"]
    cells = [claim["row"], metric, median_text, spread, "?" if n is None else str(n), str(claim["failures"]),
             versus, reference, runs_text(claim)]
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


PAGE_HEAD = ["| claim | metric | median | min-max | n | failed | vs peer (>1: better) | reference | runs |",
             "|---|---|---:|---:|---:|---:|---|---|---|"]


def section(benchmark, figures, claim_lines):
    """The lines of one benchmark's section: one row per claim."""
    story = f"[{Path(benchmark['note']).stem}]({benchmark['note']})"
    curve = f"; curve: [{Path(benchmark['curve']).name}]({benchmark['curve']})" if benchmark["curve"] else ""
    lines = [f"## {benchmark['title']}", f"{benchmark['about']} Story and commands: {story}{curve}.", "",
             *PAGE_HEAD]
    rows = [claim_row(claim) for claim in shown_claims(claims(benchmark, figures, claim_lines))]
    return lines + rows + [""] if rows else []  # a section whose claims are all off the page is left off


HEADER = """# Benchmarks: results

Generated by `python benchmarks/report.py` from `benchmarks/results.jsonl` (do not edit by hand:
`tests/tools/test_results_page.py` fails when page and data differ), one row per claim; each
investigation's question, runs, verdict and commands: [docs/results](../docs/results/index.md).

**Reproduce.** `pip install -e . --no-build-isolation`, the peers its bench's docstring names, then
the summary's command (each figure's record has its command line). `--record` appends a run's
figures to `results.jsonl` (or `--results PATH`, `$ELF_BENCH_RESULTS`); `report.py` redraws this.

**Method.** Contenders run interleaved (all on repeat or seed 0, then 1, ...), torch and BLAS on
one thread unless the command says otherwise. A claim's figure is the median of its repeats or
seeds with their min-max and number n ("not recorded": the run kept only its median); a claim
run again at more seeds pools them, each seed counted once. "failed": runs that failed or
missed their target (counted at their whole budget). "vs peer": the ratio of medians against
the peer claim (its median and n in brackets), turned so that above 1 is better (returns below
zero: the difference); a pooled claim's peer is pooled likewise. CPU seconds (`os.times()`,
children included) sit beside wall seconds where a run recorded them. A reference is a
published figure or a goal; **open** marks one not reached. Runs: date, commit and machine.
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
    lines += ["", f"**Versions** recorded with the runs: {listed}; the earliest runs recorded none.", ""]
    return lines


def render(path=RESULTS):
    """The page for the data in ``path``."""
    machines, benchmarks, figures, claim_lines = load(path)
    lines = header(machines, figures)
    for benchmark in benchmarks:
        lines += section(benchmark, figures, claim_lines)
    return "\n".join(lines) + "\n"


def main():
    write_text_atomically(PAGE, render())
    print(f"wrote {PAGE} ({len(PAGE.read_text().splitlines())} lines)")


if __name__ == "__main__":
    main()
