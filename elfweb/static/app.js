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
  $("action").textContent = frame.action === null ? "(built-in AI)" : (names[frame.action] || frame.action);
  $("value").textContent = frame.value === null ? "" : frame.value.toFixed(3);
  showPolicy(frame.pi, names, frame.action);
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
