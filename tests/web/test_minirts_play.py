"""MiniRTS played with the mouse, through the server (Starlette's test client): per-unit commands by uid
reach the game, which carries them out or refuses them in words while the game goes on; the page's schema
stays inside the game's own bounds of its action 'u'; a trained model can be the opponent."""

import pytest
from starlette.testclient import TestClient

import elfpy
from elfweb.catalog import builtin_entries, catalog, play_entry
from elfweb.messages import BUILD_TYPES, MAX_TILE, MAX_UID, UNIT_COMMAND_KINDS
from elfweb.minirts_play import UNIT_COMMANDS, MiniRtsPlay
from elfweb.server import Server

from .helpers import receive

TOKEN = "test-token"
UID, PLAYER, TYPE, X, Y, HP, ORDER = range(7)  # a row of the game's 'units'
MODEL = "pretrained/minirts_simple_ac.pt"


@pytest.fixture(scope="module")
def entries():
    return catalog(builtin_entries(playouts=8))


def opened_and_paused(ws, entry="minirts-play"):
    ws.receive_json()
    ws.send_json({"type": "open", "entry": entry})
    assert receive(ws, "opened")["kind"] == "play"
    ws.send_json({"type": "control", "action": "pause"})
    receive(ws, "status")
    ws.send_json({"type": "control", "action": "step"})
    return receive(ws, "frame")


def unit_command(units, kind, target=0, x=0, y=0, build="none"):
    return {"type": "unit_command", "units": units, "kind": kind, "target": target, "x": x, "y": y, "build": build}


def unit(frame, uid):
    return next((u for u in frame["units"] if u[UID] == uid), None)


def step(ws):
    ws.send_json({"type": "control", "action": "step"})
    return receive(ws, "frame")


def test_a_moved_worker_walks_to_the_tile_the_page_gave(entries):
    with TestClient(Server(entries, TOKEN).app()) as http, http.websocket_connect(f"/ws?token={TOKEN}") as ws:
        frame = opened_and_paused(ws)
        assert frame["unit_types"][0] == "worker" and len(frame["tiles"]) == 20 and frame["resources"] == 150
        assert all(u[PLAYER] == 0 for u in frame["units"])  # the seat's view: the enemy is in the fog
        worker = next(u for u in frame["units"] if u[TYPE] == 0)
        ws.send_json(unit_command([worker[UID]], "move", x=10, y=10))
        for _ in range(9):  # a worker steps a tile every 4 ticks; a step is a tick
            frame = step(ws)
        moved = unit(frame, worker[UID])
        assert moved[ORDER] == 1 and frame["refused"] == []  # 1: move

        def distance(u):
            return (u[X] - 10) ** 2 + (u[Y] - 10) ** 2

        assert distance(moved) < distance(worker) - 4  # on its way, by the game's own state


@pytest.mark.parametrize(("entry", "tower_built"), [("minirts-play", False), ("minirts-play-tower_defense", True),
                                                   ("minirts-play-ctf", False)])
def test_each_variant_is_played_with_the_mouse_by_its_own_rules(entries, entry, tower_built):
    with TestClient(Server(entries, TOKEN).app()) as http, http.websocket_connect(f"/ws?token={TOKEN}") as ws:
        frame = opened_and_paused(ws, entry)
        assert any("F" in row for row in frame["tiles"]) == entry.endswith("ctf")  # the seat's flag at home
        worker = next(u for u in frame["units"] if u[TYPE] == 0)
        ws.send_json(unit_command([worker[UID]], "build", x=4, y=4, build="tower"))
        frames = [step(ws) for _ in range(3)]  # the order reaches the game with the next step's reply
        refused = [reason for frame in frames for reason in frame["refused"]]
        if tower_built:  # only tower defense lets a worker build towers
            assert refused == [] and frames[-1]["resources"] == 50  # 100 paid for it
        else:
            assert refused == [f"build for unit {worker[UID]} refused: the unit cannot do that"]


def test_refused_unit_commands_are_said_and_the_game_goes_on(entries):
    with TestClient(Server(entries, TOKEN).app()) as http, http.websocket_connect(f"/ws?token={TOKEN}") as ws:
        frame = opened_and_paused(ws)
        workers = [u[UID] for u in frame["units"] if u[TYPE] == 0]
        base = next(u[UID] for u in frame["units"] if u[TYPE] == 3)
        ws.send_json(unit_command([9999], "move", x=5, y=5))  # no such unit
        ws.send_json(unit_command(workers[:1], "move", x=40, y=5))  # a 20x20 map
        ws.send_json(unit_command(workers, "build", x=8, y=8, build="barracks"))  # 150 pays for one of two
        ws.send_json(unit_command(workers[:1], "attack", target=base))  # its own base
        ws.send_json(unit_command([base], "move", x=5, y=5))  # a base does not move
        step(ws)  # the commands go out with this step's reply ...
        said = step(ws)["refused"]  # ... and what became of them comes with the next frame
        assert said == ["move for unit 9999 refused: no such unit",
                        f"move for unit {workers[0]} refused: target off the map",
                        f"build for unit {workers[1]} refused: not enough resources",
                        f"attack for unit {workers[0]} refused: no enemy unit in sight with that id",
                        f"move for unit {base} refused: the unit cannot do that"]
        assert unit(step(ws), workers[0])[ORDER] == 4  # the first worker's build stood: 4, build
        ws.send_json({"type": "control", "action": "resume"})
        before = receive(ws, "frame")["step"]
        assert receive(ws, "frame")["step"] > before  # played on


def test_unit_commands_are_for_the_mouse_game_only(entries):
    with TestClient(Server(entries, TOKEN).app()) as http, http.websocket_connect(f"/ws?token={TOKEN}") as ws:
        ws.receive_json()
        ws.send_json({"type": "open", "entry": "minirts-human"})
        receive(ws, "frame")
        ws.send_json(unit_command([1], "stop"))
        error = receive(ws, "error")
        assert not error["fatal"] and "played with the mouse" in error["message"]


def test_the_pages_unit_commands_stay_inside_the_games_bounds():
    """The engine refuses a reply outside the action's space by failing the game: the schema must keep
    every message inside it, so what is wrong reaches the game, which refuses it in words."""
    spec = elfpy.GameContext("minirts", num_games=1, unit_commands=UNIT_COMMANDS).spec()["u"]
    nvec = spec.space.nvec.reshape(UNIT_COMMANDS, 6)[0]  # kind, unit, target, x, y, type
    assert MAX_UID < nvec[1] and MAX_UID < nvec[2] and MAX_TILE < nvec[3] and MAX_TILE < nvec[4]
    play = MiniRtsPlay({})
    try:
        assert list(UNIT_COMMAND_KINDS) == play.kinds[1:]  # every kind the page names, the game's (and back)
        assert set(BUILD_TYPES) - {"none"} <= set(play.types)
        with pytest.raises(ValueError, match="at most 256 unit commands"):
            for _ in range(4):
                play.unit_command(list(range(1, 81)), "stop", 0, 0, 0, "none")
    finally:
        play.close()


def test_a_trained_model_is_the_opponent_at_its_training_pace(one_torch_thread):
    from rlpytorch.evaluate import load_trained

    entry = play_entry(MODEL)
    assert entry.kind == "play" and "minirts_simple_ac.pt" in entry.label
    assert play_entry("game.sgf") is None
    model, loader = load_trained(MODEL, {"num_threads": 1})
    model.eval()
    game = MiniRtsPlay({**loader.options, "board_fog": False}, model)  # the person's view shows the model's side
    try:
        assert game.options["seats"] == 2 and game.options["frame_skip"] == 1
        assert game.decide_every == int(loader.options["frame_skip"]) > 1  # a step is a tick: it decides as trained
        for _ in range(150):  # a worker trains in 60 ticks
            frame = game.step()
        workers = [u for u in frame.units if u[PLAYER] == 1 and u[TYPE] == 0]
        assert len(workers) > 2  # the model's commands built workers (the person, idle, built none)
        assert len([u for u in frame.units if u[PLAYER] == 0 and u[TYPE] == 0]) == 2
    finally:
        game.close()
