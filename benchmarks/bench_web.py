"""How smoothly the web page's server feeds a MiniRTS game: frames per second that reach the client,
and the server's processor use meanwhile (its CPU seconds per wall second: 1.0 is one core busy;
issue 62 asks for 30 frames per second or more with at most one core).

    python benchmarks/bench_web.py                     # MiniRTS by built-in AIs, asked for 60 fps
    python benchmarks/bench_web.py --entry minirts-random --fps 30 --seconds 10
    python benchmarks/bench_web.py --browser --fps 30 --seconds 10 --repeats 3 --record \
        --load pretrained/minirts_simple_ac.pt --entry model-minirts_simple_ac.pt --entry minirts-play

The server is started as a user starts it (``python -m elfweb``), once for the whole run. The client is
a plain websocket one, so the numbers are the server's; with ``--browser`` it is the page itself in
headless chromium (Selenium), counting the frames it put on screen. Entries are measured interleaved
(repeat 0 of each, then repeat 1, ..., the order rotating); each figure is the median of its repeats.
With ``--record`` the figures are rows of the results page's MiniRTS section (``web page: <entry>, ...``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import report  # benchmarks/report.py (this script's folder is on the path): the results file's writer

ROOT = Path(__file__).resolve().parents[1]
TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User and system time of process ``pid`` and its threads (/proc/<pid>/stat, fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS_PER_SECOND


async def measure(url: str, pid: int, entry: str, fps: int, seconds: float) -> dict[str, float]:
    import websockets

    ws_url = url.replace("http://", "ws://").replace("/?token=", "/ws?token=")
    async with websockets.connect(ws_url, max_size=1 << 24) as ws:
        await ws.recv()  # hello
        await ws.send(json.dumps({"type": "open", "entry": entry}))
        await ws.send(json.dumps({"type": "speed", "fps": fps}))
        while json.loads(await ws.recv())["type"] != "frame":  # the game is open and playing
            pass
        frames, size = 0, 0
        cpu_start, start = cpu_seconds(pid), time.perf_counter()
        while time.perf_counter() - start < seconds:
            message = json.loads(await ws.recv())
            if message["type"] == "frame":
                frames += 1
                size += len(message["image"])
        wall = time.perf_counter() - start
        cpu = cpu_seconds(pid) - cpu_start
    return {"fps": frames / wall, "server_cores": cpu / wall, "frame_kib": size / max(frames, 1) / 1024}


def chromium():
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    return webdriver.Chrome(options=options, service=webdriver.ChromeService("/usr/bin/chromedriver"))


def measure_in_browser(driver, url: str, pid: int, entry: str, fps: int, seconds: float) -> dict[str, float]:
    driver.get(f"{url}&open={entry}")
    while not driver.execute_script("return window.elfPage.frames > 0;"):
        time.sleep(0.05)
    driver.execute_script(f"window.elfPage.frames = 0; document.getElementById('speed').value = {fps}; "
                          "document.getElementById('speed').dispatchEvent(new Event('input'));")
    cpu_start, start = cpu_seconds(pid), time.perf_counter()
    time.sleep(seconds)
    frames = driver.execute_script("return window.elfPage.frames;")
    wall = time.perf_counter() - start
    cpu = cpu_seconds(pid) - cpu_start
    driver.get("about:blank")  # the page's connection closes, and its game with it
    return {"fps": frames / wall, "server_cores": cpu / wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entry", action="append", default=[],
                        help="catalog entry to watch, repeatable (default: minirts-ai)")
    parser.add_argument("--fps", type=int, default=60, help="speed asked for (default: %(default)s)")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured time (default: %(default)s)")
    parser.add_argument("--load", action="append", default=[], help="passed to the server (a model to watch)")
    parser.add_argument("--browser", action="store_true", help="measure in headless chromium, the page itself")
    parser.add_argument("--repeats", type=int, default=1, help="measurements of each entry (default: %(default)s)")
    report.add_options(parser)
    args = parser.parse_args()
    entries = args.entry or ["minirts-ai"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    server = subprocess.Popen([sys.executable, "-m", "elfweb", "--port", "0",
                               *(f"--load={path}" for path in args.load)], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, text=True)
    client = "chromium" if args.browser else "websocket"
    results: dict[str, list[dict[str, float]]] = {entry: [] for entry in entries}
    driver = chromium() if args.browser else None
    try:
        url = server.stdout.readline().split()[-1]
        for repeat in range(args.repeats):
            for k in range(len(entries)):
                entry = entries[(k + repeat) % len(entries)]  # the order rotates
                if driver is not None:
                    result = measure_in_browser(driver, url, server.pid, entry, args.fps, args.seconds)
                else:
                    result = asyncio.run(measure(url, server.pid, entry, args.fps, args.seconds))
                results[entry].append(result)
                print(json.dumps({"bench": "web", "client": client, "entry": entry, "fps_asked": args.fps,
                                  **{k: round(v, 2) for k, v in result.items()}}), flush=True)
    finally:
        if driver is not None:
            driver.quit()
        server.send_signal(signal.SIGINT)
        server.wait()
    goal = "issue 62's goal"
    figures = []
    for entry, runs in results.items():  # rows of the MiniRTS section
        row = f"web page: {entry}, {client}, {args.fps} fps asked"
        common = dict(benchmark="minirts", row=row, unit="")
        figures.append(dict(**common, metric="frames/s", values=[r["fps"] for r in runs], better="higher",
                            reference={"label": goal, "value": 30}))
        figures.append(dict(**common, metric="server CPU s per wall s", values=[r["server_cores"] for r in runs],
                            better="lower", reference={"label": goal, "value": 1}))
    report.publish(figures, args)


if __name__ == "__main__":
    main()
