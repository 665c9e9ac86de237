// The dealer console: one table's next action, cards, timer, result, bead plate and sources, live over the table's
// WebSocket; the dealer's actions as buttons and keyboard shortcuts. Everything shown comes from the server's view,
// so a reload or a reconnect shows the true state; while the feed is down the page is greyed out, never stale.
import {
  api, byTestId, cardElement, el, goSignIn, hideBanner, phaseName, renderWho, requireSignIn, setText, showBanner,
  watchTable,
} from "/static/common.js";

const params = new URLSearchParams(location.search);
let tableId = params.get("table");
let me = null;
let latest = null; // the last view shown
// A round seen in play that ended without a result was voided: the view keeps no record of it, so the console
// remembers it (until the next round opens) to say so rather than show the previous result as if it were the last.
let voided = null;

const WINNER_LETTER = { banker: "B", player: "P", tie: "T" };

function post(path, body) {
  return api("POST", `/api/tables/${encodeURIComponent(tableId)}/${path}`, body);
}

// The dealer's actions: the request each sends. Keys are the buttons' data-action.
const ACTIONS = {
  shuffle: () => post("shuffle"),
  cut: () => post("cut", {}),
  open_betting: () => post("open-betting"),
  close_betting: () => post("close-betting"),
  draw: () => post("simulator/draw"),
  dealer_change: () => askDealerChange(),
  cut_card_out: () => post("cut-card-out"),
  declare_error: () => askError(),
  key_card: () => askKeyCard(),
};

const SHORTCUTS = {
  s: "shuffle", c: "cut", o: "open_betting", n: "close_betting", d: "dealer_change", x: "cut_card_out",
  e: "declare_error", k: "key_card", " ": "draw",
};

let busy = false;

async function act(action) {
  if (busy || !tableId) return;
  const button = document.querySelector(`button[data-action="${action}"]`);
  if (!button || button.hidden) return;
  busy = true;
  button.disabled = true;
  try {
    const answer = await ACTIONS[action]();
    if (answer && answer.table) {
      hideBanner();
      render(answer.table);
    } else if (answer) {
      hideBanner();
    }
  } catch (error) {
    if (error.status === 401) {
      goSignIn();
      return;
    }
    showBanner(error.message);
  } finally {
    busy = false;
    button.disabled = false;
  }
}

// Dialogs resolve to the answer of the request they send, or null when cancelled.
function dialogRequest(testid, submit) {
  const dialog = byTestId(testid);
  return new Promise((resolve, reject) => {
    const form = dialog.querySelector("form");
    const cancel = dialog.querySelector('button[value="cancel"]');
    const done = () => {
      form.removeEventListener("submit", onSubmit);
      cancel.removeEventListener("click", onCancel);
      dialog.removeEventListener("cancel", onCancel);
    };
    const onCancel = (event) => {
      event.preventDefault();
      done();
      dialog.close();
      resolve(null);
    };
    const onSubmit = async (event) => {
      event.preventDefault();
      done();
      dialog.close();
      try {
        resolve(await submit(form));
      } catch (error) {
        reject(error);
      }
    };
    form.addEventListener("submit", onSubmit);
    cancel.addEventListener("click", onCancel);
    dialog.addEventListener("cancel", onCancel);
    dialog.showModal();
    const first = form.querySelector("select, input");
    if (first) first.focus();
  });
}

function askError() {
  byTestId("error-detail").value = "";
  return dialogRequest("error-dialog", () =>
    post("declare-error", { kind: byTestId("error-kind").value, detail: byTestId("error-detail").value.trim() }));
}

function askKeyCard() {
  byTestId("key-card-code").value = "";
  return dialogRequest("key-card-dialog", () =>
    post("card", { card: byTestId("key-card-code").value.trim().toUpperCase() }));
}

function askDealerChange() {
  const current = latest && latest.dealer ? latest.dealer : "nobody";
  setText(byTestId("dealer-change-text"),
    `${me ? me.name : "You"} take${me ? "s" : ""} over table ${tableId} from ${current}. ` +
    "One card is burned before the next round.");
  return dialogRequest("dealer-change-dialog", () => post("dealer-change"));
}

function renderHand(side, cards, total, due, winner) {
  const hand = byTestId(`hand-${side}`);
  hand.classList.toggle("due", due);
  hand.classList.toggle("winner", winner);
  byTestId(`${side}-cards`).replaceChildren(...cards.map((code) => cardElement(code)));
  setText(byTestId(`${side}-total`), cards.length ? total : "");
}

function renderHands(view) {
  const hands = byTestId("hands");
  const round = view.round;
  const result = view.last_result;
  const info = [];
  const previous = latest && latest !== view ? latest.round : null;
  if (round) voided = null;
  else if (previous && (!result || result.game_id !== previous.game_id)) voided = previous;
  hands.dataset.gameId = (round || voided || result || {}).game_id || "";
  if (round) {
    hands.dataset.showing = "round";
    info.push(`Round ${round.number} · game ${round.game_id}`);
    if (round.last_hand) info.push("LAST HAND of the shoe");
    renderHand("player", round.player, round.player_total, round.next_side === "player", false);
    renderHand("banker", round.banker, round.banker_total, round.next_side === "banker", false);
  } else if (voided) {
    hands.dataset.showing = "voided";
    info.push(el("span", { class: "voided-note", testid: "round-voided" },
      `Round ${voided.number} voided · game ${voided.game_id}`));
    renderHand("player", [], 0, false, false);
    renderHand("banker", [], 0, false, false);
  } else if (result) {
    hands.dataset.showing = "result";
    info.push(`Round ${result.round} result · game ${result.game_id}`);
    renderHand("player", result.player, result.player_total, false, result.winner === "player");
    renderHand("banker", result.banker, result.banker_total, false, result.winner === "banker");
  } else {
    hands.dataset.showing = "empty";
    renderHand("player", [], 0, false, false);
    renderHand("banker", [], 0, false, false);
  }
  if (view.burn) info.push(`Burning: ${view.burn.remaining} left (${view.burn.reason.replace("_", " ")})`);
  byTestId("round-info").replaceChildren(...info.flatMap((part, index) => (index ? [" · ", part] : [part])));
}

function renderResult(result) {
  const box = byTestId("last-result");
  const line = byTestId("last-result-text");
  if (!result) {
    box.dataset.winner = "";
    line.className = "result-line";
    setText(line, "—");
    setText(byTestId("last-result-game"), "");
    byTestId("last-result-cards").replaceChildren();
    return;
  }
  box.dataset.winner = result.winner;
  box.dataset.gameId = result.game_id;
  line.className = `result-line ${result.winner}`;
  const score = `${result.player_total} – ${result.banker_total}`;
  const notes = [result.natural ? "natural" : "", result.player_pair ? "player pair" : "",
    result.banker_pair ? "banker pair" : ""].filter(Boolean);
  setText(line, result.winner === "tie" ? `TIE ${score}` : `${result.winner.toUpperCase()} WINS ${score}`);
  setText(byTestId("last-result-game"), `Round ${result.round} · ${result.game_id}${notes.length ? ` · ${notes.join(", ")}` : ""}`);
  byTestId("last-result-cards").replaceChildren(
    el("div", { testid: "last-result-player", dataset: { total: result.player_total } }, "P ",
      ...result.player.map((code) => cardElement(code))),
    el("div", { testid: "last-result-banker", dataset: { total: result.banker_total } }, "B ",
      ...result.banker.map((code) => cardElement(code))),
  );
}

function renderBeadPlate(results) {
  const beads = results.map((result) => {
    const letter = WINNER_LETTER[result.winner] || "?";
    return el("div", { class: `bead ${letter}`, testid: "bead", dataset: { winner: letter }, title: result.game_id }, letter);
  });
  byTestId("bead-plate").replaceChildren(...beads);
}

// The big road of the shoe, as the server places it on its 6-row grid (dragon tail included).
function renderBigRoad(roads) {
  const node = byTestId("big-road");
  const cells = roads.big_road.flat();
  const places = roads.big_road_grid.flat();
  node.style.setProperty("--columns", String(Math.max(12, ...places.map(([column]) => column + 1))));
  node.replaceChildren(...places.map(([column, row], i) => {
    const mark = el("span", { class: `ring ${cells[i].winner}`, testid: "big-road-cell" }, cells[i].ties ? String(cells[i].ties) : "");
    mark.style.gridColumn = String(column + 1);
    mark.style.gridRow = String(row + 1);
    return mark;
  }));
}

function renderBetTotals(totals) {
  const entries = Object.entries(totals || {});
  setText(byTestId("bet-totals"), entries.length
    ? entries.map(([bet, amount]) => `${bet.replace("_", " ")} ${(amount / 100).toFixed(2)}`).join(" · ") : "—");
}

function renderChat(messages) {
  byTestId("chat").replaceChildren(...(messages || []).map((m) =>
    el("li", { testid: "chat-message", class: m.system ? "chat-system" : null }, el("b", {}, `${m.nickname}: `), m.shown)));
}

function renderSources(sources) {
  const items = Object.entries(sources || {}).map(([name, health]) =>
    el("li", { class: "source", testid: "source", dataset: { state: health.state, source: name } },
      el("span", { class: "dot" }),
      el("span", {}, name),
      el("span", { class: "muted" }, `${health.state}${health.detail ? ` — ${health.detail}` : ""}`)));
  byTestId("sources").replaceChildren(...(items.length ? items : [el("li", { class: "muted" }, "no sources")]));
}

function renderButtons(view) {
  byTestId("btn-draw").hidden = !view.simulated_shoe;
  for (const button of document.querySelectorAll("[data-testid=buttons] button")) {
    button.classList.toggle("primary", button.dataset.action === view.next_action.action);
  }
}

function render(view) {
  if (latest && view.seq < latest.seq) return; // an older view than the one shown
  document.body.classList.toggle("suspended", view.phase === "suspended" || Boolean(view.log_unavailable));
  const action = byTestId("next-action");
  action.dataset.action = view.next_action.action;
  action.dataset.phase = view.phase;
  setText(action, view.next_action.text);
  setText(byTestId("next-action-detail"), view.next_action.detail);
  const light = byTestId("light");
  light.dataset.light = view.light;
  const seconds = byTestId("seconds-left");
  seconds.dataset.seconds = view.seconds_left;
  setText(seconds, view.phase === "betting_open" ? `${Math.ceil(view.seconds_left)} s` : "");
  const suspension = view.suspension;
  setText(byTestId("suspension-detail"), view.log_unavailable ? `log unavailable: ${view.log_unavailable}` : suspension
    ? `${suspension.detail || suspension.reason} (interrupted: ${phaseName(suspension.interrupted)})` : "");
  const facts = [`phase: ${phaseName(view.phase)}`, `dealer: ${view.dealer || "—"}`, `shoe ${view.shoe}`,
    `cards out ${view.cards_drawn}${view.cut_position !== null ? ` / cut at ${view.cut_position}` : ""}`];
  if (view.last_hand_round !== null) facts.push(`last hand: round ${view.last_hand_round}`);
  setText(byTestId("table-facts"), facts.join(" · "));
  renderHands(view);
  renderResult(view.last_result);
  renderBeadPlate(view.recent_results || []);
  if (view.roads) renderBigRoad(view.roads);
  renderBetTotals(view.bet_totals);
  renderChat(view.chat);
  renderSources(view.sources);
  renderButtons(view);
  latest = view;
}

function onStatus(state, detail, code) {
  const badge = byTestId("connection");
  badge.dataset.state = state;
  document.body.classList.toggle("stale", state !== "live");
  if (state === "live") setText(badge, "live");
  else if (state === "connecting") setText(badge, "connecting…");
  else if (state === "reconnecting") setText(badge, `disconnected — retrying in ${Math.round(detail / 100) / 10} s`);
  else {
    setText(badge, "disconnected");
    if (code === 4401) goSignIn();
    else showBanner(detail);
  }
}

function onKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
  if (document.querySelector("dialog[open]")) return;
  const target = event.target;
  if (target && ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName)) return;
  const action = SHORTCUTS[event.key.toLowerCase()];
  if (!action) return;
  event.preventDefault();
  act(action);
}

async function start() {
  me = await requireSignIn(["dealer", "pit_boss"]);
  if (!me) return;
  renderWho(me);
  if (!tableId) {
    try {
      const tables = await api("GET", "/api/tables");
      tableId = tables.length ? tables[0].table : null;
    } catch (error) {
      showBanner(error.message);
    }
    if (!tableId) {
      showBanner("No table to show: open console.html?table=ID");
      return;
    }
    history.replaceState(null, "", `?table=${encodeURIComponent(tableId)}`);
  }
  document.title = `${tableId} — dealer console`;
  setText(byTestId("table-title"), `Table ${tableId}`);
  for (const button of document.querySelectorAll("[data-testid=buttons] button")) {
    button.addEventListener("click", () => {
      button.blur(); // Space and Enter stay shortcuts, never a second press of the last button touched
      act(button.dataset.action);
    });
  }
  document.addEventListener("keydown", onKey);
  watchTable(tableId, render, onStatus);
}

start().catch((error) => showBanner(error.message));
