// The page: one websocket to the server, which steps the games and draws the watched ones;
// this script shows the pictures, draws the Go board, and sends the player's clicks.
"use strict";

const token = new URLSearchParams(location.search).get("token") || "";
const $ = (id) => document.getElementById(id);
const socket = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws?token=${encodeURIComponent(token)}`);
const page = { frames: 0, last: null, go: null, kind: null, closed: null };  // read by the browser tests
window.elfPage = page;

function send(message) { socket.send(JSON.stringify(message)); }
function say(text, isError) { $("message").textContent = text; $("message").className = isError ? "error" : ""; }

socket.onmessage = (event) => {
  const message = JSON.parse(event.data);
  if (message.type === "hello") showEntries(message.entries);
  else if (message.type === "opened") showOpened(message);
  else if (message.type === "frame") showFrame(message);
  else if (message.type === "status") say(message.playing ? `playing at ${message.fps} fps` : "paused", false);
  else if (message.type === "go") showGo(message);
  else if (message.type === "curve") showCurve(message);
  else if (message.type === "error") say(message.message, true);
};
socket.onclose = (event) => { page.closed = event.code; say(`disconnected (${event.code}) ${event.reason}`, true); };

function showEntries(entries) {
  const select = $("entries");
  select.replaceChildren(...entries.map((entry) => new Option(entry.label, entry.id)));
  const wanted = new URLSearchParams(location.search).get("open");  // a link may name an entry to open at once
  if (wanted && entries.some((entry) => entry.id === wanted)) { select.value = wanted; send({ type: "open", entry: wanted }); }
}
$("open").onclick = () => send({ type: "open", entry: $("entries").value });

function showOpened(entry) {
  page.kind = entry.kind;
  page.frames = 0;
  page.go = null;
  const board = entry.kind === "go" || entry.kind === "sgf";
  $("watch").hidden = board;
  $("go").hidden = !board;
  $("commands").hidden = entry.kind !== "command";
  $("play").hidden = entry.kind !== "play";
  $("overlay").hidden = entry.kind !== "play";
  play.selected.clear();
  play.mode = null;
  $("run").hidden = entry.kind !== "run";
  page.curve = null;
  $("watch-controls").hidden = entry.kind === "replay";
  $("go-controls").hidden = entry.kind === "sgf";
  $("go-visits-row").hidden = entry.kind === "sgf";  // a record: no search to show
  $("scrubber").hidden = entry.kind !== "replay" && entry.kind !== "sgf";
  say(`opened ${entry.label}`, false);
}

// --- watched games ---------------------------------------------------------------------------

for (const action of ["pause", "resume", "step", "restart"]) $(action).onclick = () => send({ type: "control", action });
$("speed").oninput = () => { $("fps").textContent = $("speed").value; send({ type: "speed", fps: Number($("speed").value) }); };

// A replay's position: the scrubber follows what the server shows, and asks for what the player drags to.
function showPosition(message) {
  if (message.count === undefined) return;
  $("scrub").max = message.count - 1;
  $("scrub").value = message.index;
  $("scrub-at").textContent = `${message.index} / ${message.count - 1}`;
}
$("scrub").oninput = () => send({ type: "seek", index: Number($("scrub").value) });

function showFrame(frame) {
  showPosition(frame);
  $("frame").src = frame.image;
  page.frames += 1;
  page.last = frame;
  $("episode").textContent = frame.episode;
  $("stepno").textContent = frame.step;
  $("return").textContent = frame.episode_return.toFixed(2);
  const names = frame.action_names;
  $("action").textContent = frame.units ? "yours, with the mouse" :
    frame.action === null ? "(built-in AI)" : (names[frame.action] || frame.action);
  $("value").textContent = frame.value === null ? "" : frame.value.toFixed(3);
  showPolicy(frame.pi, names, frame.action);
  if (frame.units) showPlay(frame);
  if (!$("commands").hidden && $("command-buttons").childElementCount !== names.length) showCommands(names);
}

function showPolicy(pi, names, chosen) {
  const rows = (pi || []).map((p, i) => {
    const row = document.createElement("div");
    row.className = i === chosen ? "bar chosen" : "bar";
    const name = document.createElement("span"); name.className = "name"; name.textContent = names[i] || i;
    const fill = document.createElement("span"); fill.className = "fill"; fill.style.width = `${Math.round(p * 120)}px`;
    const value = document.createElement("span"); value.textContent = p.toFixed(2);
    row.append(name, fill, value);
    return row;
  });
  $("policy").replaceChildren(...rows);
}

function showCommands(names) {
  $("command-buttons").replaceChildren(...names.map((name, action) => {
    const button = document.createElement("button");
    button.textContent = name;
    button.dataset.action = action;
    button.onclick = () => {
      send({ type: "command", action });
      for (const other of $("command-buttons").children) other.classList.toggle("chosen", other === button);
    };
    return button;
  }));
}

// --- MiniRTS with the mouse: select your units, then command them; the game checks every command ----------

const play = { selected: new Set(), mode: null, drag: null, frame: null };
page.selected = [];  // the selected uids, for the browser tests
const UID = 0, PLAYER = 1, TYPE = 2, X = 3, Y = 4, HP = 5, ORDER = 6;  // a unit's row (the game's 'units')
const overlay = $("overlay");

function typeName(unit) { return play.frame.unit_types[unit[TYPE]]; }
function mine(unit) { return unit[PLAYER] === 0; }  // the person plays player 0
function unitAt(x, y) { return play.frame.units.find((unit) => unit[X] === x && unit[Y] === y); }
function selectedUnits() { return play.frame.units.filter((unit) => play.selected.has(unit[UID])); }

function tileOf(event) {
  const rect = overlay.getBoundingClientRect(), n = play.frame.tiles.length;
  const clamp = (v) => Math.max(0, Math.min(n - 1, v));
  return [clamp(Math.floor((event.clientX - rect.left) / rect.width * n)),
          clamp(Math.floor((event.clientY - rect.top) / rect.height * n))];
}

function showPlay(frame) {
  if (play.frame && play.frame.episode !== frame.episode) play.selected.clear();  // uids start again
  play.frame = frame;
  const alive = new Set(frame.units.filter(mine).map((unit) => unit[UID]));
  for (const uid of play.selected) if (!alive.has(uid)) play.selected.delete(uid);  // the dead drop out
  page.selected = [...play.selected];
  if (frame.refused.length) say(frame.refused.join("; "), true);
  const img = $("frame");
  if (overlay.width !== img.clientWidth || overlay.height !== img.clientHeight) {
    overlay.width = img.clientWidth;
    overlay.height = img.clientHeight;
  }
  drawOverlay();
  const names = selectedUnits().map((unit) => `${typeName(unit)} ${unit[UID]} (hp ${unit[HP]})`);
  $("selected").textContent = names.length ? names.join(", ") : "none";
  $("resources").textContent = frame.resources;
}

function drawOverlay() {
  const g = overlay.getContext("2d"), tile = overlay.width / play.frame.tiles.length;
  g.clearRect(0, 0, overlay.width, overlay.height);
  g.strokeStyle = "#ffe000"; g.lineWidth = 2;
  for (const unit of selectedUnits()) g.strokeRect(unit[X] * tile + 1, unit[Y] * tile + 1, tile - 2, tile - 2);
  if (play.drag && play.drag.moved) {
    const [x0, y0, x1, y1] = play.drag.box;
    g.setLineDash([4, 3]); g.strokeStyle = "#fff";
    g.strokeRect(x0, y0, x1 - x0, y1 - y0); g.setLineDash([]);
  }
}

function command(kind, units, fields = {}) {
  if (!units.length) { say(`${kind}: select units of yours that can do it first`, true); return; }
  send({ type: "unit_command", units: units.map((unit) => unit[UID]), kind, target: fields.target || 0,
         x: fields.x || 0, y: fields.y || 0, build: fields.build || "none" });
  say(`${kind}: ${units.length} unit(s)`, false);
}

const MOBILE = new Set(["worker", "melee", "ranged"]);
const mobile = () => selectedUnits().filter((unit) => MOBILE.has(typeName(unit)));
const workers = () => selectedUnits().filter((unit) => typeName(unit) === "worker");
const fighters = () => selectedUnits().filter((unit) => ["worker", "melee", "ranged", "tower"].includes(typeName(unit)));

// A command aimed at tile (x, y): `kind` given by a key or button, or (right-click) by what stands there.
function commandAt(kind, x, y) {
  const there = unitAt(x, y);
  if (kind === null) kind = there && !mine(there) ? "attack" : play.frame.tiles[y][x] === "$" ? "gather" : "move";
  if (kind === "attack") {
    if (!there || mine(there)) { say("attack: point at an enemy unit you see", true); return; }
    command("attack", fighters(), { target: there[UID] });
  } else if (kind === "gather") command("gather", workers(), { x, y });
  else if (kind === "move") command("move", mobile(), { x, y });
  else command("build", workers().slice(0, 1), { x, y, build: kind });  // one worker builds it
}

const TRAINS = { worker: "base", melee: "barracks", ranged: "barracks" };
function commandNow(kind) {
  if (kind === "stop") command("stop", mobile());
  else command("build", selectedUnits().filter((unit) => typeName(unit) === TRAINS[kind]), { build: kind });
}

function setMode(mode) {
  play.mode = mode;
  $("play-mode").textContent = mode ? `${mode}: left-click where (Esc cancels)` : "";
}

overlay.onmousedown = (event) => {
  if (event.button !== 0 || !play.frame) return;
  const rect = overlay.getBoundingClientRect();
  const at = [event.clientX - rect.left, event.clientY - rect.top];
  play.drag = { start: at, box: [...at, ...at], moved: false, tile: tileOf(event) };
};
overlay.onmousemove = (event) => {
  if (!play.drag) return;
  const rect = overlay.getBoundingClientRect(), [sx, sy] = play.drag.start;
  const x = event.clientX - rect.left, y = event.clientY - rect.top;
  play.drag.box = [Math.min(sx, x), Math.min(sy, y), Math.max(sx, x), Math.max(sy, y)];
  play.drag.moved = play.drag.moved || Math.abs(x - sx) + Math.abs(y - sy) > 4;
  drawOverlay();
};
overlay.onmouseup = (event) => {
  if (event.button !== 0 || !play.drag) return;
  const drag = play.drag;
  play.drag = null;
  if (drag.moved) {  // a box: the mobile units of yours inside it (shift: added to the selection)
    if (!event.shiftKey) play.selected.clear();
    const tile = overlay.width / play.frame.tiles.length, [x0, y0, x1, y1] = drag.box;
    for (const unit of play.frame.units) {
      const cx = (unit[X] + 0.5) * tile, cy = (unit[Y] + 0.5) * tile;
      if (mine(unit) && MOBILE.has(typeName(unit)) && cx >= x0 && cx <= x1 && cy >= y0 && cy <= y1) play.selected.add(unit[UID]);
    }
  } else if (play.mode) {
    commandAt(play.mode, ...drag.tile);
    setMode(null);
  } else {
    if (!event.shiftKey) play.selected.clear();
    const there = unitAt(...drag.tile);
    if (there && mine(there)) play.selected.add(there[UID]);
  }
  page.selected = [...play.selected];
  showPlay(play.frame);
};
overlay.oncontextmenu = (event) => {
  event.preventDefault();
  if (play.frame) commandAt(null, ...tileOf(event));
};

const KEYS = { m: "move", a: "attack", g: "gather", b: "barracks", t: "tower" };
const NOW_KEYS = { s: "stop", 1: "worker", 2: "melee", 3: "ranged" };
document.addEventListener("keydown", (event) => {
  if (page.kind !== "play" || !play.frame || ["INPUT", "SELECT"].includes(event.target.tagName)) return;
  if (KEYS[event.key]) setMode(KEYS[event.key]);
  else if (NOW_KEYS[event.key]) commandNow(NOW_KEYS[event.key]);
  else if (event.key === "Escape") { setMode(null); play.selected.clear(); showPlay(play.frame); }
});
for (const button of $("play-buttons").children) {
  button.onclick = () => { if (!play.frame) return; if (button.dataset.mode) setMode(button.dataset.mode); else commandNow(button.dataset.now); };
}

// A followed run's learning curve, redrawn whole each time progress.csv grows.
function showCurve(curve) {
  page.curve = curve;
  const svg = $("curve"), width = svg.width.baseVal.value, height = svg.height.baseVal.value, pad = 8;
  const span = (values) => [Math.min(...values), Math.max(...values)];
  const [x0, x1] = span(curve.x), [y0, y1] = span(curve.y);
  const sx = (x) => pad + (x1 > x0 ? (x - x0) / (x1 - x0) : 0.5) * (width - 2 * pad);
  const sy = (y) => height - pad - (y1 > y0 ? (y - y0) / (y1 - y0) : 0.5) * (height - 2 * pad);
  const line = document.createElementNS("http://www.w3.org/2000/svg", "polyline");
  line.setAttribute("points", curve.x.map((x, i) => `${sx(x).toFixed(1)},${sy(curve.y[i]).toFixed(1)}`).join(" "));
  line.setAttribute("fill", "none");
  line.setAttribute("stroke", "#3b6fd8");
  line.setAttribute("stroke-width", "2");
  svg.replaceChildren(line);
  const last = curve.y.length ? curve.y[curve.y.length - 1].toFixed(2) : "none yet";
  $("curve-label").textContent = `${curve.y_key} by ${curve.x_key}: ${curve.y.length} rows, last ${last}; ` +
    `playing the checkpoint of step ${curve.model_step}`;
}

// --- Go --------------------------------------------------------------------------------------

const board = $("board");
function cell(size) { return board.width / (size + 1); }

function showGo(state) {
  showPosition(state);
  page.go = state;
  say(state.result ? `game over: ${state.result}` : "", false);  // the move was made (and answered)
  const size = state.size, step = cell(size), g = board.getContext("2d");
  g.fillStyle = "#dcb35c"; g.fillRect(0, 0, board.width, board.height);
  g.strokeStyle = "#000"; g.lineWidth = 1;
  for (let i = 1; i <= size; i++) {
    g.beginPath(); g.moveTo(step, i * step); g.lineTo(size * step, i * step); g.stroke();
    g.beginPath(); g.moveTo(i * step, step); g.lineTo(i * step, size * step); g.stroke();
  }
  state.stones.forEach((row, r) => row.forEach((stone, c) => {
    if (!stone) return;
    g.beginPath(); g.arc((c + 1) * step, (r + 1) * step, step * 0.45, 0, 2 * Math.PI);
    g.fillStyle = stone === 1 ? "#111" : "#f6f6f6"; g.fill(); g.strokeStyle = "#000"; g.stroke();
  }));
  drawVisits(state, g, step);
  $("go-turn").textContent = state.result ? "game over" : `${state.to_move === "b" ? "Black" : "White"} to move`;
  $("go-result").textContent = state.result || "playing";
  $("go-score").textContent = `Tromp-Taylor count now: ${state.score > 0 ? "B+" : state.score < 0 ? "W+" : ""}${Math.abs(state.score)}`;
  $("go-moves").replaceChildren(...state.moves.map((move) => { const li = document.createElement("li"); li.textContent = move; return li; }));
}

// the opponent's search: a blue disc on each point it visited, its area the point's share of the root's visits
const VISIT_COLOR = "rgb(40, 110, 220)";
function drawVisits(state, g, step) {
  const visits = state.visits, shown = visits && $("go-visits").checked;
  page.visitsShown = 0;
  $("go-visits-note").textContent = visits ? `last search: ${state.playouts} playouts, ` +
    `top point ${Math.round(100 * Math.max(...visits.flat()))}%, pass ${Math.round(100 * state.pass_visits)}%` : "";
  if (!shown) return;
  const most = Math.max(...visits.flat());
  visits.forEach((row, r) => row.forEach((share, c) => {
    if (share <= 0 || state.stones[r][c]) return;
    g.beginPath(); g.arc((c + 1) * step, (r + 1) * step, step * (0.12 + 0.3 * Math.sqrt(share / most)), 0, 2 * Math.PI);
    g.fillStyle = VISIT_COLOR; g.fill();
    page.visitsShown += 1;
  }));
}
$("go-visits").onchange = () => { if (page.go) showGo(page.go); };

board.onclick = (event) => {
  if (!page.go || page.kind !== "go") return;
  const rect = board.getBoundingClientRect(), step = cell(page.go.size) * rect.width / board.width;
  const col = Math.round((event.clientX - rect.left) / step) - 1, row = Math.round((event.clientY - rect.top) / step) - 1;
  if (row >= 0 && col >= 0 && row < page.go.size && col < page.go.size) { say("thinking ...", false); send({ type: "go_move", row, col }); }
};
$("go-pass").onclick = () => send({ type: "go_pass" });
$("go-resign").onclick = () => send({ type: "go_resign" });
$("go-undo").onclick = () => send({ type: "go_undo" });
