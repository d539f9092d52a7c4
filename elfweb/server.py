"""The ASGI application: the page, its assets, and one websocket per viewer.

A viewer opens one catalog entry at a time. A watched game steps in a thread
(the engine blocks while its worker runs the game) and its frames go out at
the viewer's speed; a Go move, with the opponent's answer, runs in a thread
too. Every message from the page goes through ``elfweb.messages.parse``; one
that fails closes that viewer's connection with the error (close code 1008),
and only that one. The page and the websocket need the server's token in
the URL; the numbers of viewers and of open games are bounded.
"""

from __future__ import annotations

import asyncio
import base64
import hmac
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from elfweb.catalog import Entry
from elfweb.follow import FollowedRun
from elfweb.go_game import GoGame, IllegalMove
from elfweb.messages import BadMessage, parse
from elfweb.minirts_play import MiniRtsPlay
from elfweb.replays import MiniRtsReplay, SgfReplay

STATIC = Path(__file__).resolve().parent / "static"
POLICY_VIOLATION = 1008  # websocket close codes (RFC 6455)
TRY_AGAIN_LATER = 1013
DEFAULT_FPS = 30
CATCH_UP_S = 0.25  # how far behind its schedule a watched game may fall before the schedule moves on


@dataclass(frozen=True)
class Limits:
    viewers: int = 8
    games: int = 4


class Server:
    """The state shared by all viewers: the catalog, the token, and the counts against the limits."""

    def __init__(self, entries: dict[str, Entry], token: str, limits: Limits | None = None) -> None:
        self.entries, self.token, self.limits = entries, token, limits or Limits()
        self.viewers = 0
        self.games = 0

    def authorized(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def app(self) -> Starlette:
        return Starlette(routes=[
            Route("/", self.page),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
            WebSocketRoute("/ws", self.websocket),
        ])

    async def page(self, request: Any) -> Response:
        if not self.authorized(request.query_params.get("token")):
            return PlainTextResponse("this server needs its token: open the URL it printed", status_code=403)
        return HTMLResponse((STATIC / "index.html").read_text())

    async def websocket(self, ws: WebSocket) -> None:
        if not self.authorized(ws.query_params.get("token")):
            await ws.close(code=POLICY_VIOLATION)
            return
        if self.viewers >= self.limits.viewers:
            await ws.accept()
            await ws.close(code=TRY_AGAIN_LATER, reason=f"at most {self.limits.viewers} viewers")
            return
        self.viewers += 1
        viewer = Viewer(self, ws)
        try:
            await ws.accept()
            await viewer.run()
        finally:
            self.viewers -= 1
            await viewer.end_game()


class Viewer:
    """One connection: its open game, and the task that plays a watched one."""

    def __init__(self, server: Server, ws: WebSocket) -> None:
        self.server, self.ws = server, ws
        self.game: Any = None
        self.lock = asyncio.Lock()  # one operation on the game at a time (a step, a move, a restart)
        self.playing = asyncio.Event()  # set while a watched game runs (not paused)
        self.fps = DEFAULT_FPS
        self.player_task: asyncio.Task | None = None
        self.seed = 0

    async def run(self) -> None:
        await self.ws.send_json({"type": "hello", "entries": [e.describe() for e in self.server.entries.values()]})
        while True:
            try:
                received = await self.ws.receive()
            except WebSocketDisconnect:
                return
            if received["type"] == "websocket.disconnect":
                return
            try:
                message = parse(received.get("text") if received.get("text") is not None
                                else received.get("bytes") or b"")
                await self.handle(message)
            except BadMessage as error:
                await self.ws.send_json({"type": "error", "fatal": True, "message": str(error)})
                # A close reason is at most 123 bytes of UTF-8: cut by bytes, not by characters.
                await self.ws.close(code=POLICY_VIOLATION, reason=str(error).encode()[:120].decode(errors="ignore"))
                return
            except (IllegalMove, ValueError) as error:  # a refused move or command: said, and the game goes on
                await self.ws.send_json({"type": "error", "fatal": False, "message": str(error)})
            except Exception as error:  # a game that failed (the engine names it): said; the viewer may open another
                await self.ws.send_json({"type": "error", "fatal": False,
                                         "message": f"failed: {type(error).__name__}: {error}"})

    async def handle(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "open":
            await self.open(message["entry"])
            return
        if self.game is None:
            raise ValueError(f"'{kind}' needs an open game: send 'open' first")
        if isinstance(self.game, GoGame):
            await self.go(kind, message)
        elif isinstance(self.game, MiniRtsReplay | SgfReplay):
            if kind != "seek":
                raise ValueError(f"'{kind}' is not for a replay: it takes 'seek'")
            await self.ws.send_json(await asyncio.to_thread(self.game.show, message["index"]))
        else:
            await self.watch(kind, message)

    async def open(self, entry_id: str) -> None:
        entry = self.server.entries.get(entry_id)
        if entry is None:
            raise ValueError(f"no entry '{entry_id}'")
        await self.end_game()
        if self.server.games >= self.server.limits.games:
            raise ValueError(f"the server has its limit of {self.server.limits.games} games open; try later")
        self.server.games += 1
        try:
            self.game = await asyncio.to_thread(entry.open, self.seed)
        except BaseException:
            self.server.games -= 1
            raise
        await self.ws.send_json({"type": "opened", **entry.describe()})
        if isinstance(self.game, GoGame):
            await self.send_go()
        elif isinstance(self.game, MiniRtsReplay | SgfReplay):
            await self.ws.send_json(await asyncio.to_thread(self.game.show, 0))
        else:
            self.playing.set()
            self.player_task = asyncio.create_task(self.play_watched())

    async def end_game(self) -> None:
        if self.player_task is not None:
            self.player_task.cancel()
            try:
                await self.player_task
            except (asyncio.CancelledError, Exception):  # noqa: S110 -- its error was sent when it happened
                pass
            self.player_task = None
        if self.game is not None:
            async with self.lock:
                game, self.game = self.game, None
                await asyncio.to_thread(game.close)
            self.server.games -= 1
        self.playing.clear()

    # --- watched games --------------------------------------------------------------------------

    async def play_watched(self) -> None:
        loop = asyncio.get_running_loop()
        due = loop.time()  # when the next frame is due: a schedule, so that late wake-ups do not add up
        try:
            while True:
                if not self.playing.is_set():
                    await self.playing.wait()
                    due = loop.time()
                await self.step_once(playing_only=True)
                # A slow step is made up by the next ones, but no more than CATCH_UP_S of them at once.
                due = max(due + 1 / self.fps, loop.time() - CATCH_UP_S)
                await asyncio.sleep(max(0.0, due - loop.time()))
        except WebSocketDisconnect:
            return
        except Exception as error:  # a game that fails ends; the viewer hears why and may open another
            await self.ws.send_json({"type": "error", "fatal": False, "message": f"the game stopped: {error}"})

    async def step_once(self, playing_only: bool = False) -> None:
        """One step and its frame, sent under the lock: once a pause holds the lock, no frame of the
        playing task follows its acknowledgement. ``playing_only``: not if paused meanwhile."""
        async with self.lock:
            if self.game is None or (playing_only and not self.playing.is_set()):
                return
            frame = await asyncio.to_thread(self.game.step)
            image = "data:image/png;base64," + base64.b64encode(frame.png).decode("ascii")
            await self.ws.send_json({"type": "frame", "image": image, "playing": self.playing.is_set(),
                                     **frame.info()})
            if isinstance(self.game, FollowedRun):
                curve = await asyncio.to_thread(self.game.curve)
                if curve is not None:
                    await self.ws.send_json(curve)

    async def watch(self, kind: str, message: dict[str, Any]) -> None:
        if kind == "speed":
            self.fps = message["fps"]
        elif kind == "command":
            async with self.lock:  # after the step under way: every frame after the acknowledgement obeys it
                self.game.command(message["action"])
        elif kind == "unit_command":
            if not isinstance(self.game, MiniRtsPlay):
                raise ValueError("'unit_command' is for a MiniRTS game played with the mouse")
            async with self.lock:  # taken by the next step; the game says in its frame what it refused
                self.game.unit_command(message["units"], message["kind"], message["target"], message["x"],
                                       message["y"], message["build"])
            return  # no status: a person gives many, and the frames show them obeyed
        elif kind == "control":
            action = message["action"]
            if action == "pause":
                self.playing.clear()
                async with self.lock:  # the step under way, if any, sends its frame first
                    pass
            elif action == "resume":
                self.playing.set()
            elif action == "step":
                self.playing.clear()
                await self.step_once()
            else:  # restart
                async with self.lock:
                    await asyncio.to_thread(self.game.restart)
                if not self.playing.is_set():
                    await self.step_once()
        else:
            raise ValueError(f"'{kind}' is not for a watched game")
        await self.ws.send_json({"type": "status", "playing": self.playing.is_set(), "fps": self.fps})

    # --- Go -------------------------------------------------------------------------------------

    async def go(self, kind: str, message: dict[str, Any]) -> None:
        game: GoGame = self.game
        actions = {"go_move": lambda: game.move(message["row"], message["col"]), "go_pass": game.pass_move,
                   "go_resign": game.resign, "go_undo": game.undo}
        if kind not in actions:
            raise ValueError(f"'{kind}' is not for a Go game")
        async with self.lock:
            await asyncio.to_thread(actions[kind])
        await self.send_go()

    async def send_go(self) -> None:
        async with self.lock:
            state = await asyncio.to_thread(self.game.state)
        await self.ws.send_json({"type": "go", **state})
