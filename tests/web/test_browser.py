"""The page in a real browser: Debian's headless chromium, driven by Selenium, on a server started as a
user starts it (``python -m elfweb``), and stopped with Ctrl-C. Pictures are checked by their content:
the players' colours in a MiniRTS frame, the stones' colours where they were clicked on the Go board."""

import io
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from selenium import webdriver
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from elfpy.go import play
from elfpy.gtp import GtpEngine
from elfpy.render.minirts import GROUND, PLAYER_COLORS

ROOT = Path(__file__).resolve().parents[2]
PATIENCE_S = 90  # an upper bound for any one wait; pytest's timeout bounds the test
GO_NETWORK = "pretrained/go9_selfplay_64min.pt2"
MODEL = "pretrained/minirts_simple_ac.pt"


SGF_MOVES = [("b", 40), ("w", 20), ("b", 30)]  # E5, C7, D6


@pytest.fixture(scope="module")
def server_url(tmp_path_factory):
    from elfpy.go.sgf import to_sgf

    sgf = tmp_path_factory.mktemp("sgf") / "game.sgf"
    sgf.write_text(to_sgf(SGF_MOVES, 9, 7.5, "B+R"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen([sys.executable, "-m", "elfweb", "--port", "0", "--playouts", "8", "--load", MODEL,
                                "--load", GO_NETWORK, "--load", str(sgf)], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    assert line.startswith("elfweb: open http://127.0.0.1:"), line
    yield line.split()[-1]
    process.send_signal(signal.SIGINT)  # Ctrl-C
    assert process.wait() == 0


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1100,800"):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService("/usr/bin/chromedriver"))
    yield driver
    driver.quit()


def wait(browser, condition):
    return WebDriverWait(browser, PATIENCE_S).until(lambda driver: condition())


def page_state(browser, path):
    return browser.execute_script(f"return window.elfPage.{path};")


def open_entry(browser, url, entry):
    """Loads the page with ``entry`` to open, and waits until the server said it opened (``kind`` set)."""
    browser.get(f"{url}&open={entry}")
    wait(browser, lambda: browser.execute_script("return window.elfPage ? window.elfPage.kind : null;") is not None)


def screenshot(element) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(element.screenshot_as_png)).convert("RGB")).astype(int)


def keep_picture(browser, name):
    """With ELFWEB_SCREENSHOTS=<folder> (docs/ for the README), the page as shown, small: cropped, 64 colours."""
    folder = os.environ.get("ELFWEB_SCREENSHOTS")
    if folder:
        page = Image.open(io.BytesIO(browser.get_screenshot_as_png())).convert("RGB").crop((0, 0, 900, 477))
        page.quantize(colors=64).save(Path(folder) / name, optimize=True)


def pixels_of(image: np.ndarray, color) -> np.ndarray:
    return np.abs(image - np.array(color)).sum(axis=2) < 30


def test_watching_a_model_play_minirts(browser, server_url):
    open_entry(browser, server_url, "model-minirts_simple_ac.pt")
    wait(browser, lambda: page_state(browser, "frames") >= 3)
    picture = screenshot(browser.find_element(By.ID, "frame"))
    assert pixels_of(picture, PLAYER_COLORS[0]).sum() > 50  # the model's units (the other side is in the fog)
    assert pixels_of(picture, GROUND).sum() > 1000
    bars = browser.find_elements(By.CSS_SELECTOR, "#policy .bar")
    assert len(bars) == 9 and "gather" in browser.find_element(By.ID, "policy").text
    assert -10 < float(browser.find_element(By.ID, "value").text) < 10

    browser.find_element(By.ID, "pause").click()
    wait(browser, lambda: browser.find_element(By.ID, "message").text == "paused")
    paused_at = page_state(browser, "last.step")
    browser.find_element(By.ID, "step").click()
    wait(browser, lambda: page_state(browser, "last.step") == paused_at + 1)
    browser.find_element(By.ID, "restart").click()
    wait(browser, lambda: page_state(browser, "last.step") == 0)


def click_point(browser, canvas, size, row, col):
    step = canvas.size["width"] / (size + 1)
    x, y = (col + 1) * step - canvas.size["width"] / 2, (row + 1) * step - canvas.size["height"] / 2
    ActionChains(browser).move_to_element_with_offset(canvas, round(x), round(y)).click().perform()


def test_a_go_game_clicked_to_its_end_shows_gtps_score(browser, server_url):
    open_entry(browser, server_url, "go-people")
    wait(browser, lambda: page_state(browser, "go") is not None)
    canvas = browser.find_element(By.ID, "board")
    moves = [(2, 2), (6, 6), (2, 6), (6, 2), (4, 4)]
    for count, (row, col) in enumerate(moves, start=1):
        click_point(browser, canvas, 9, row, col)
        wait(browser, lambda count=count: len(page_state(browser, "go.moves")) == count)
    click_point(browser, canvas, 9, 4, 4)  # occupied: refused, and said so
    wait(browser, lambda: "illegal" in browser.find_element(By.ID, "message").text)
    for _ in range(2):
        count = len(page_state(browser, "go.moves"))
        browser.find_element(By.ID, "go-pass").click()
        wait(browser, lambda count=count: len(page_state(browser, "go.moves")) == count + 1)
    wait(browser, lambda: browser.find_element(By.ID, "go-result").text != "playing")

    with GtpEngine() as gtp:
        for color, (row, col) in zip("bwbwb", moves, strict=True):
            gtp.handle(f"play {color} {play.vertex(row * 9 + col, 9)}")
        gtp.handle("play w pass")
        gtp.handle("play b pass")
        assert browser.find_element(By.ID, "go-result").text == gtp.handle("final_score")[0].strip("= \n")

    board = screenshot(canvas)
    step = board.shape[1] / 10

    def color_at(row, col):
        return board[round((row + 1) * step), round((col + 1) * step)]

    assert color_at(2, 2).max() < 60 and color_at(4, 4).max() < 60  # black stones
    assert color_at(6, 6).min() > 200 and color_at(6, 2).min() > 200  # white stones
    assert abs(color_at(0.5, 7.5) - np.array([220, 179, 92])).sum() < 60  # between lines: the board's wood


def test_the_network_answers_a_clicked_move(browser, server_url):
    open_entry(browser, server_url, "go-go9_selfplay_64min.pt2")
    wait(browser, lambda: page_state(browser, "go") is not None)
    click_point(browser, browser.find_element(By.ID, "board"), 9, 4, 4)
    wait(browser, lambda: len(page_state(browser, "go.moves")) == 2)
    assert page_state(browser, "go.moves")[0] == "B E5" and page_state(browser, "go.moves")[1].startswith("W ")
    # the search's visits drawn on the board: a blue disc at the most visited point still empty, gone when toggled off
    visits, stones = np.array(page_state(browser, "go.visits")), np.array(page_state(browser, "go.stones"))
    row, col = np.unravel_index(np.where(stones == 0, visits, -1).argmax(), visits.shape)
    assert visits[row, col] > 0 and page_state(browser, "visitsShown") == (visits[stones == 0] > 0).sum()
    board = browser.find_element(By.ID, "board")

    def color_at():  # just off the point's crossing lines, inside the smallest disc
        image = screenshot(board)
        step = image.shape[1] / 10
        return image[round((row + 1.07) * step), round((col + 1.07) * step)]

    assert abs(color_at() - np.array([40, 110, 220])).sum() < 60
    keep_picture(browser, "web_go.png")
    browser.find_element(By.ID, "go-visits").click()
    wait(browser, lambda: page_state(browser, "visitsShown") == 0)
    assert abs(color_at() - np.array([220, 179, 92])).sum() < 60  # the board's wood again
    browser.find_element(By.ID, "go-visits").click()
    browser.find_element(By.ID, "go-undo").click()
    wait(browser, lambda: page_state(browser, "go.moves") == [])


def test_a_minirts_command_changes_the_game(browser, server_url):
    """MiniRTS's seat gives strategic commands (cpp/games/rts: its action), so the page offers those. Idle, the
    two workers only gather; "build worker" makes the base train more, which the picture shows in blue."""
    open_entry(browser, server_url, "minirts-human")
    wait(browser, lambda: len(browser.find_elements(By.CSS_SELECTOR, "#command-buttons button")) == 9)
    frame = browser.find_element(By.ID, "frame")
    before = pixels_of(screenshot(frame), PLAYER_COLORS[0]).sum()
    browser.find_element(By.CSS_SELECTOR, "#command-buttons button[data-action='1']").click()  # build worker
    wait(browser, lambda: page_state(browser, "last.action") == 1)
    assert browser.find_element(By.ID, "action").text == "build worker"
    wait(browser, lambda: pixels_of(screenshot(frame), PLAYER_COLORS[0]).sum() > before + 200)  # new workers


def test_an_sgf_game_is_scrubbed_through(browser, server_url):
    open_entry(browser, server_url, "sgf-game.sgf")
    wait(browser, lambda: page_state(browser, "go") is not None)
    assert browser.find_element(By.ID, "go-pass").is_displayed() is False  # a record, not a game to play
    assert browser.find_element(By.ID, "go-visits").is_displayed() is False  # and no search to show
    scrubber = browser.find_element(By.ID, "scrub")
    for index in range(1, len(SGF_MOVES) + 1):
        scrubber.send_keys(Keys.ARROW_RIGHT)
        wait(browser, lambda index=index: len(page_state(browser, "go.moves")) == index)
    assert browser.find_element(By.ID, "go-result").text == "B+R"
    keep_picture(browser, "web_replay.png")
    board = screenshot(browser.find_element(By.ID, "board"))
    step = board.shape[1] / 10
    assert board[round(5 * step), round(5 * step)].max() < 60  # E5: black
    assert board[round(3 * step), round(3 * step)].min() > 200  # C7: white
    scrubber.send_keys(Keys.HOME)
    wait(browser, lambda: page_state(browser, "go.moves") == [])


def test_hostile_clients_of_the_real_server_leave_the_browsers_game_playing(browser, server_url):
    import json
    import random

    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    open_entry(browser, server_url, "minirts-ai")
    wait(browser, lambda: page_state(browser, "frames") >= 1)
    ws_url = server_url.replace("http://", "ws://").replace("/?token=", "/ws?token=")
    rng = random.Random(62)
    hostile = ["x" * (1 << 20), json.dumps({"type": "€" * 60}), json.dumps({"type": "open", "entry": "é" * 64}),
               bytes(rng.randrange(256) for _ in range(2000)), json.dumps({"type": "speed", "fps": 10**100})]
    codes = []
    for message in hostile:
        with connect(ws_url, max_size=1 << 22) as attacker:
            json.loads(attacker.recv())  # hello
            attacker.send(message)
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    attacker.recv()
            codes.append(closed.value.rcvd.code)
    assert codes == [1009, 1008, 1008, 1008, 1008]  # too big for the server's limit; refused by a schema
    with pytest.raises(Exception, match="403"), connect(ws_url.replace("token=", "token=x")):
        pass
    seen = page_state(browser, "frames")
    wait(browser, lambda: page_state(browser, "frames") > seen + 5)  # the browser's game went on throughout
    assert page_state(browser, "closed") is None


UID, PLAYER, TYPE, X, Y, ORDER = 0, 1, 2, 3, 4, 6  # columns of a unit in a mouse game's frame (the game's 'units')


def tile_offset(element, tiles, x, y):
    """Selenium's offset (from the element's centre) of tile (x, y)'s centre."""
    width, height, n = element.size["width"], element.size["height"], len(tiles)
    return round((x + 0.5) * width / n - width / 2), round((y + 0.5) * height / n - height / 2)


def test_minirts_played_with_the_mouse_select_move_gather_and_build(browser, server_url):
    """A click selects a worker, a box both; a right-click on ground moves them (the game's state sent to the
    page shows them walk there), a right-click on a mine sends them gathering from it, and the key b then a
    click sends one of them to build a barracks there."""
    open_entry(browser, server_url, "minirts-play")
    wait(browser, lambda: page_state(browser, "frames") >= 1)
    browser.find_element(By.ID, "pause").click()
    wait(browser, lambda: browser.find_element(By.ID, "message").text == "paused")
    frame = page_state(browser, "last")
    overlay, tiles = browser.find_element(By.ID, "overlay"), frame["tiles"]
    workers = [u for u in frame["units"] if u[PLAYER] == 0 and u[TYPE] == 0]
    assert len(workers) == 2
    ActionChains(browser).move_to_element_with_offset(overlay, *tile_offset(overlay, tiles, *workers[0][X:Y + 1])) \
        .click().perform()
    wait(browser, lambda: page_state(browser, "selected") == [workers[0][UID]])
    x0, x1 = min(u[X] for u in workers) - 1, max(u[X] for u in workers) + 1  # a box around both workers
    y0, y1 = min(u[Y] for u in workers) - 1, max(u[Y] for u in workers) + 1
    start, end = tile_offset(overlay, tiles, max(x0, 0), max(y0, 0)), tile_offset(overlay, tiles, x1, y1)
    ActionChains(browser).move_to_element_with_offset(overlay, *start).click_and_hold() \
        .move_by_offset(end[0] - start[0], end[1] - start[1]).release().perform()
    wait(browser, lambda: sorted(page_state(browser, "selected")) == sorted(u[UID] for u in workers))

    occupied = {(u[X], u[Y]) for u in frame["units"]}
    n, (wx, wy) = len(tiles), workers[0][X:Y + 1]
    goal = next((x, y) for y in range(n) for x in range(n)  # ground the seat has seen, 3 to 6 tiles away
                if tiles[y][x] == "." and (x, y) not in occupied and 3 <= max(abs(x - wx), abs(y - wy)) <= 6)

    def distances():
        units = {u[UID]: u for u in page_state(browser, "last.units")}
        return [(units[w[UID]][X] - goal[0]) ** 2 + (units[w[UID]][Y] - goal[1]) ** 2 for w in workers]

    before = distances()
    ActionChains(browser).move_to_element_with_offset(overlay, *tile_offset(overlay, tiles, *goal)) \
        .context_click().perform()
    wait(browser, lambda: browser.find_element(By.ID, "message").text == "move: 2 unit(s)")
    browser.find_element(By.ID, "resume").click()
    wait(browser, lambda: all(now <= 2 < then for now, then in zip(distances(), before, strict=True)))
    keep_picture(browser, "web_minirts_play.png")

    mine = next((x, y) for y in range(len(tiles)) for x in range(len(tiles)) if tiles[y][x] == "$")
    ActionChains(browser).move_to_element_with_offset(overlay, *tile_offset(overlay, tiles, *mine)) \
        .context_click().perform()
    wait(browser, lambda: all(u[ORDER] == 3 for u in page_state(browser, "last.units")
                              if u[UID] in {w[UID] for w in workers}))  # 3: gather

    ActionChains(browser).send_keys("b").perform()  # build a barracks: the key, then a click on the site
    wait(browser, lambda: "barracks" in browser.find_element(By.ID, "play-mode").text)
    ActionChains(browser).move_to_element_with_offset(overlay, *tile_offset(overlay, tiles, *goal)).click().perform()
    wait(browser, lambda: [u[ORDER] for u in page_state(browser, "last.units")
                           if u[UID] in {w[UID] for w in workers}].count(4) == 1)  # 4: build, by one worker
    assert page_state(browser, "closed") is None
