"""elfweb.server through Starlette's test client: the token, the games a viewer opens, the limits,
and hostile messages, which close only their own connection."""

import json
import random

import numpy as np
import pytest
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from elfpy.go import play
from elfpy.gtp import GtpEngine
from elfweb.catalog import builtin_entries, catalog, loaded_entry
from elfweb.server import POLICY_VIOLATION, Limits, Server

from .helpers import receive

TOKEN = "test-token"


@pytest.fixture(scope="module")
def entries():
    return catalog([*builtin_entries(playouts=8), loaded_entry("pretrained/minirts_simple_ac.pt", playouts=8)])


def client(entries, limits=None):
    return TestClient(Server(entries, TOKEN, limits).app())


def test_the_page_and_the_websocket_want_the_token(entries):
    with client(entries) as http:
        assert http.get("/").status_code == 403
        assert http.get("/?token=wrong").status_code == 403
        page = http.get(f"/?token={TOKEN}")
        assert page.status_code == 200 and "/static/app.js" in page.text
        assert "WebSocket" in http.get("/static/app.js").text  # the script ships in the package
        with pytest.raises(WebSocketDisconnect) as refused, http.websocket_connect("/ws?token=wrong"):
            pass
        assert refused.value.code == POLICY_VIOLATION


def test_a_watched_game_plays_pauses_steps_and_restarts(entries):
    with client(entries) as http, http.websocket_connect(f"/ws?token={TOKEN}") as ws:
        hello = ws.receive_json()
        assert {e["id"] for e in hello["entries"]} >= {"minirts-ai", "go-people", "model-minirts_simple_ac.pt"}
        ws.send_json({"type": "open", "entry": "minirts-ai"})
        assert receive(ws, "opened")["kind"] == "watch"
        first = receive(ws, "frame")
        assert first["image"].startswith("data:image/png;base64,") and first["step"] == 0
        ws.send_json({"type": "control", "action": "pause"})
        receive(ws, "status")
        ws.send_json({"type": "control", "action": "step"})
        stepped = receive(ws, "frame")
        assert receive(ws, "status")["playing"] is False
        ws.send_json({"type": "control", "action": "step"})
        assert receive(ws, "frame")["step"] == stepped["step"] + 1  # paused: exactly one frame per step
        ws.send_json({"type": "control", "action": "restart"})
        restarted = receive(ws, "frame")
        assert restarted["step"] == 0 and restarted["episode"] > stepped["episode"]


def test_a_model_shows_its_policy_and_value(entries):
    with client(entries) as http, http.websocket_connect(f"/ws?token={TOKEN}") as ws:
        ws.receive_json()
        ws.send_json({"type": "open", "entry": "model-minirts_simple_ac.pt"})
        frame = receive(ws, "frame")
        assert len(frame["pi"]) == len(frame["action_names"]) == 9
        assert sum(frame["pi"]) == pytest.approx(1, abs=1e-3)
        assert frame["action"] == max(range(9), key=frame["pi"].__getitem__)  # greedy: the likeliest command
        assert -10 < frame["value"] < 10
        assert frame["action_names"][5] == "gather"  # from the game's own description of its action


def test_a_person_commands_the_minirts_seat(entries):
    with client(entries) as http, http.websocket_connect(f"/ws?token={TOKEN}") as ws:
        ws.receive_json()
        ws.send_json({"type": "open", "entry": "minirts-human"})
        assert receive(ws, "opened")["kind"] == "command"
        ws.send_json({"type": "command", "action": 5})
        receive(ws, "status")
        assert receive(ws, "frame")["action"] == 5
        ws.send_json({"type": "command", "action": 9})  # in the schema's range, not the game's: refused, goes on
        error = receive(ws, "error")
        assert not error["fatal"] and "not one of the game's 9" in error["message"]
        assert receive(ws, "frame")["action"] == 5


def test_a_go_game_between_two_people_ends_with_gtps_score(entries):
    moves = [(2, 2), (6, 6), (2, 6), (6, 2)]
    with client(entries) as http, http.websocket_connect(f"/ws?token={TOKEN}") as ws:
        ws.receive_json()
        ws.send_json({"type": "open", "entry": "go-people"})
        assert receive(ws, "go")["moves"] == []
        for row, col in moves:
            ws.send_json({"type": "go_move", "row": row, "col": col})
            state = receive(ws, "go")
        assert state["stones"][6][2] == 2 and state["to_move"] == "b"
        ws.send_json({"type": "go_move", "row": 6, "col": 2})  # occupied
        assert "illegal move" in receive(ws, "error")["message"]
        ws.send_json({"type": "go_undo"})
        assert len(receive(ws, "go")["moves"]) == 3  # two people: one move back
        ws.send_json({"type": "go_move", "row": 6, "col": 2})
        receive(ws, "go")
        for _ in range(2):
            ws.send_json({"type": "go_pass"})
            state = receive(ws, "go")
    with GtpEngine() as gtp:
        for color, (row, col) in zip("bwbw", moves, strict=True):
            gtp.handle(f"play {color} {play.vertex(row * 9 + col, 9)}")
        gtp.handle("play b pass")
        gtp.handle("play w pass")
        assert state["result"] == gtp.handle("final_score")[0].strip("= \n")


def test_the_search_answers_each_move_and_undo_takes_back_both(entries):
    with client(entries) as http, http.websocket_connect(f"/ws?token={TOKEN}") as ws:
        ws.receive_json()
        ws.send_json({"type": "open", "entry": "go-search"})
        receive(ws, "go")
        ws.send_json({"type": "go_move", "row": 4, "col": 4})
        state = receive(ws, "go")
        assert len(state["moves"]) == 2 and state["moves"][1].startswith("W ") and state["to_move"] == "b"
        visits = np.array(state["visits"])  # the search of the answer: each point's share of its root's visits
        assert visits.shape == (9, 9) and abs(visits.sum() + state["pass_visits"] - 1) < 1e-3
        assert visits[4, 4] == 0 and (visits > 0).sum() > 1  # the legal points only: E5 holds black's stone
        answer = np.argwhere(np.array(state["stones"]) == 2)[0]
        assert visits[tuple(answer)] == visits.max()  # the move played is the most visited
        ws.send_json({"type": "go_resign"})
        assert receive(ws, "go")["result"] == "W+R"
        ws.send_json({"type": "go_move", "row": 0, "col": 0})
        assert "over" in receive(ws, "error")["message"]
        ws.send_json({"type": "go_undo"})
        state = receive(ws, "go")
        assert state["moves"] == [] and state["visits"] is None  # taken back with the move


def test_no_path_from_the_page_is_opened(entries):
    with client(entries) as http, http.websocket_connect(f"/ws?token={TOKEN}") as ws:
        ws.receive_json()
        ws.send_json({"type": "open", "entry": "../pretrained/minirts_simple_ac.pt"})
        error = receive(ws, "error")
        assert not error["fatal"] and "no entry" in error["message"]


def test_hostile_messages_close_their_connection_while_another_viewer_plays_on(entries):
    rng = random.Random(7)
    hostile = ["", "{", "null", json.dumps({"type": "open", "entry": "minirts-ai", "extra": 1}),
               json.dumps({"type": "go_move", "row": -1, "col": 0}), "x" * 1_000_000,
               json.dumps({"type": "open", "entry": {"$ne": 1}}), bytes(rng.randrange(256) for _ in range(300)).hex(),
               json.dumps({"type": "unit_command", "units": [1] * 1000, "kind": "move", "target": 0, "x": 0, "y": 0,
                           "build": "none"}),
               json.dumps({"type": "unit_command", "units": [1], "kind": "move", "target": 0, "x": 99, "y": 0,
                           "build": "none"})]
    hostile += ["".join(chr(rng.randrange(1, 0x2FFF)) for _ in range(rng.randrange(1, 400))) for _ in range(12)]
    with client(entries) as http, http.websocket_connect(f"/ws?token={TOKEN}") as watcher:
        watcher.receive_json()
        watcher.send_json({"type": "open", "entry": "minirts-ai"})
        receive(watcher, "frame")
        for text in hostile:
            with http.websocket_connect(f"/ws?token={TOKEN}") as attacker:
                attacker.receive_json()
                attacker.send_text(text)
                error = attacker.receive_json()
                assert error["type"] == "error" and error["fatal"]
                with pytest.raises(WebSocketDisconnect) as closed:
                    attacker.receive_json()
                assert closed.value.code == POLICY_VIOLATION
        with http.websocket_connect(f"/ws?token={TOKEN}") as attacker:
            attacker.receive_json()
            attacker.send_bytes(b"\x00\xff" * 10)
            assert attacker.receive_json()["fatal"]
        before = receive(watcher, "frame")["step"]
        assert receive(watcher, "frame")["step"] > before  # the other viewer's game went on


def test_viewers_and_games_are_bounded(entries):
    with client(entries, Limits(viewers=2, games=1)) as http:
        with http.websocket_connect(f"/ws?token={TOKEN}") as one, http.websocket_connect(f"/ws?token={TOKEN}") as two:
            with pytest.raises(WebSocketDisconnect) as refused, http.websocket_connect(f"/ws?token={TOKEN}") as third:
                third.receive_json()
            assert "at most 2 viewers" in refused.value.reason
            one.receive_json()
            two.receive_json()
            one.send_json({"type": "open", "entry": "go-people"})
            receive(one, "go")
            two.send_json({"type": "open", "entry": "go-people"})
            assert "limit of 1 games" in receive(two, "error")["message"]
            one.send_json({"type": "open", "entry": "minirts-ai"})  # a viewer's new game replaces its old one
            receive(one, "frame")


@pytest.fixture(scope="module")
def replay_files(tmp_path_factory):
    from elfpy.go.sgf import to_sgf
    from elfpy.render import minirts

    folder = tmp_path_factory.mktemp("replays")
    episode = minirts.play({"seats": 0}, seed=3, max_steps=12)
    episode.replay.save(folder / "game.json")
    moves = [("b", 40), ("w", 20), ("b", 81), ("w", 81)]  # E5, C7, pass, pass
    (folder / "game.sgf").write_text(to_sgf(moves, 9, 7.5, "W+7.5"))
    return folder, episode


def test_replays_are_scrubbed_through(replay_files):
    folder, episode = replay_files
    entries = catalog([loaded_entry(str(folder / "game.json"), 8), loaded_entry(str(folder / "game.sgf"), 8)])
    with client(entries) as http, http.websocket_connect(f"/ws?token={TOKEN}") as ws:
        ws.receive_json()
        ws.send_json({"type": "open", "entry": "replay-game.json"})
        assert receive(ws, "opened")["kind"] == "replay"
        first = receive(ws, "frame")
        assert first["index"] == 0 and first["count"] == len(episode.boards) == 13
        ws.send_json({"type": "seek", "index": 5})
        shown = receive(ws, "frame")
        assert shown["index"] == 5 and shown["image"] != first["image"]
        ws.send_json({"type": "seek", "index": 10_000})  # past the end: the last position
        assert receive(ws, "frame")["index"] == 12
        ws.send_json({"type": "control", "action": "step"})
        assert "takes 'seek'" in receive(ws, "error")["message"]

        ws.send_json({"type": "open", "entry": "sgf-game.sgf"})
        assert receive(ws, "opened")["kind"] == "sgf"
        assert receive(ws, "go")["moves"] == []
        ws.send_json({"type": "seek", "index": 2})
        state = receive(ws, "go")
        assert state["moves"] == ["B E5", "W C7"] and state["stones"][4][4] == 1 and state["stones"][2][2] == 2
        ws.send_json({"type": "seek", "index": 4})
        assert receive(ws, "go")["result"] == "W+7.5"


def test_a_replay_that_does_not_reproduce_is_refused_at_start(replay_files, tmp_path):
    from elfpy.render import minirts

    folder, episode = replay_files
    broken = minirts.Replay.load(folder / "game.json")
    broken.board_crcs[3] ^= 1
    broken.save(tmp_path / "broken.json")
    with pytest.raises(ValueError, match="broken.json: board 3 .* differs"):
        loaded_entry(str(tmp_path / "broken.json"), 8)
    (tmp_path / "bad.sgf").write_text("(;FF[4]SZ[9];B[ee];W[ee])")
    with pytest.raises(ValueError, match="illegal"):
        loaded_entry(str(tmp_path / "bad.sgf"), 8)
    (tmp_path / "off.sgf").write_text("(;FF[4]SZ[9];B[jj])")
    with pytest.raises(ValueError, match=r"B\[jj\] is off the 9x9 board"):
        loaded_entry(str(tmp_path / "off.sgf"), 8)


def test_sgf_corners_and_passes_of_a_19x19_game(tmp_path):
    from elfweb.replays import SgfReplay

    (tmp_path / "big.sgf").write_text("(;FF[4]SZ[19]KM[6.5];B[ss];W[aa];B[tt];W[])")
    replay = SgfReplay(tmp_path / "big.sgf")
    assert replay.moves == [("b", "T1"), ("w", "A19"), ("b", "pass"), ("w", "pass")] and replay.komi == 6.5
    state = replay.show(2)
    assert state["stones"][18][18] == 1 and state["stones"][0][0] == 2 and state["size"] == 19


def test_a_game_that_cannot_draw_itself_is_refused_at_start():
    with pytest.raises(ValueError, match="game 'cartpole' cannot draw itself"):
        builtin_entries(8, games=["cartpole"])
    with pytest.raises(ValueError, match="--game gym:NoSuchGame-v0: NameNotFound"):
        builtin_entries(8, games=["gym:NoSuchGame-v0"])


def test_a_followed_run_sends_its_curve_as_it_grows_and_plays_its_newest_checkpoint(tmp_path):
    from rlpytorch.evaluate import load_trained
    from rlpytorch.models.base import read_checkpoint

    run = tmp_path / "run"
    run.mkdir()
    args = read_checkpoint("pretrained/minirts_simple_ac.pt")["args"]
    model, _ = load_trained("pretrained/minirts_simple_ac.pt")
    model.save(run / "last.pt", args)
    header = "frames,updates,return_mean\n"
    (run / "progress.csv").write_text(header + "1000,1,-0.5\n")
    entries = catalog([loaded_entry(str(run), 8)])
    with client(entries) as http, http.websocket_connect(f"/ws?token={TOKEN}") as ws:
        ws.receive_json()
        ws.send_json({"type": "open", "entry": "run-run"})
        assert receive(ws, "opened")["kind"] == "run"
        curve = receive(ws, "curve")
        assert curve["x"] == [1000] and curve["y"] == [-0.5] and curve["model_step"] == model.step
        (run / "progress.csv").write_text(header + "1000,1,-0.5\n2000,2,\n3000,3,0.25\n")  # an empty cell: left out
        model.step += 100
        model.save(run / "last.pt", args)  # training wrote a newer checkpoint
        curve = receive(ws, "curve")
        assert curve["x"] == [1000, 3000] and curve["y"] == [-0.5, 0.25]
        ws.send_json({"type": "speed", "fps": 60})
        while curve["model_step"] != model.step:  # taken up when the episode under way ends, and said so
            curve = receive(ws, "curve")
        assert curve["x"] == [1000, 3000]


def test_a_hosted_game_is_drawn_by_its_own_render():
    import base64
    import io

    import gymnasium as gym
    import numpy as np
    from PIL import Image

    entries = catalog(builtin_entries(playouts=8, games=["gym:CartPole-v1"]))
    with client(entries) as http, http.websocket_connect(f"/ws?token={TOKEN}") as ws:
        ws.receive_json()
        ws.send_json({"type": "open", "entry": "random-gym_CartPole-v1"})
        frames = [receive(ws, "frame") for _ in range(3)]
    picture = np.asarray(Image.open(io.BytesIO(base64.b64decode(frames[0]["image"].split(",", 1)[1]))))
    env = gym.make("CartPole-v1", render_mode="rgb_array")
    env.reset(seed=0)
    assert picture.shape == env.render().shape  # the env's own picture, whatever its state
    env.close()
    assert [f["step"] for f in frames] == [0, 1, 2] and all(f["action"] in (0, 1) for f in frames)


def test_a_game_that_fails_to_open_is_said_and_frees_its_place(entries):
    from elfweb.catalog import Entry

    def broken(seed):
        raise RuntimeError("the engine could not start")

    with_broken = {**entries, "broken": Entry("broken", "a game that fails", "watch", broken)}
    with client(with_broken, Limits(games=1)) as http, http.websocket_connect(f"/ws?token={TOKEN}") as ws:
        ws.receive_json()
        ws.send_json({"type": "open", "entry": "broken"})
        error = receive(ws, "error")
        assert not error["fatal"] and "RuntimeError: the engine could not start" in error["message"]
        ws.send_json({"type": "open", "entry": "go-people"})  # the one game allowed is free again
        assert receive(ws, "go")["moves"] == []


def test_a_hosted_games_run_is_followed_with_its_model_playing(tmp_path, one_torch_thread):
    from rlpytorch import training

    run = tmp_path / "cartpole"
    training.main(["--game", "gym:CartPole-v1", "--num_frames", "300", "--num_games", "2", "--num_workers", "1",
                "--actor_batch", "2", "--train_batch", "2", "--eval_episodes", "1", "--save_dir", str(run),
                "--no-progress"])
    entries = catalog([loaded_entry(str(run), 8)])
    with client(entries) as http, http.websocket_connect(f"/ws?token={TOKEN}") as ws:
        ws.receive_json()
        ws.send_json({"type": "open", "entry": "run-cartpole"})
        frames, curve = [], None
        while len(frames) < 2 or curve is None:  # the curve comes after the first frame
            message = ws.receive_json()
            frames += [message] if message["type"] == "frame" else []
            curve = message if message["type"] == "curve" else curve
    assert all(f["action"] in (0, 1) and f["image"].startswith("data:image/png") for f in frames)
    assert len(curve["x"]) >= 1 and curve["x"][-1] >= 300
    for frame in frames:  # the model's view beside the picture: its action probabilities and value
        assert len(frame["pi"]) == 2 and sum(frame["pi"]) == pytest.approx(1, abs=1e-3)
        assert frame["action"] == max(range(2), key=frame["pi"].__getitem__)  # greedy: the likelier action
        assert np.isfinite(frame["value"]) and frame["action_names"] == ["0", "1"]
