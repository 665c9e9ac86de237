// The dealer console: one table's next action, cards, timer, result, roads and sources, live over the table's
// WebSocket; the dealer's actions as buttons and keyboard shortcuts. Everything shown comes from the server's view,
// so a reload or a reconnect shows the true state; while the feed is down the page is greyed out, never stale.
// Rules held here: a button the procedure does not allow now (the view's `allowed_actions`) is disabled, and its
// shortcut only says why (`refused_actions`), sending nothing; a card is drawn from the simulated shoe only once the
// card drawn before it has arrived, so a quick second Space never draws a card nobody asked for.
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
const BURN_REASONS = { shuffle: "after the shuffle", error: "after the error", dealer_change: "for the new dealer" };
const DECISIONS = {
  continued: "let play continue",
  corrected: "corrected the cards and let play continue",
  voided: "voided the round",
};
const DRAW_PATIENCE_MS = 5000; // how long a drawn card may take to arrive before another may be drawn

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
let cardWaiter = null; // resolves once a view shows the card the simulated shoe was asked for

function setBusy(button, on) {
  busy = on;
  const buttons = byTestId("buttons");
  if (on) buttons.dataset.busy = "true";
  else delete buttons.dataset.busy;
  button.classList.toggle("pending", on);
}

// After a draw: wait until a view shows one more card out of the shoe (burned, dealt or set aside), or a new shoe.
function cardArrived(before) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => { cardWaiter = null; resolve(); }, DRAW_PATIENCE_MS);
    cardWaiter = (view) => {
      if (view.cards_drawn !== before.cards_drawn || view.shoe !== before.shoe) {
        clearTimeout(timer);
        cardWaiter = null;
        resolve();
      }
    };
  });
}

async function act(action) {
  if (busy || !tableId || !latest) return;
  const button = document.querySelector(`button[data-action="${action}"]`);
  if (!button || button.hidden) return;
  if (!(latest.allowed_actions || []).includes(action)) {
    // Not allowed now: say why, send nothing (a card drawn when none is due would suspend the table).
    const why = (latest.refused_actions || {})[action] || `${button.firstChild.textContent.trim()}: not now.`;
    showBanner(why, "info");
    return;
  }
  const before = latest;
  setBusy(button, true);
  try {
    const answer = await ACTIONS[action]();
    if (answer && answer.table) {
      hideBanner();
      render(answer.table);
    } else if (answer) {
      hideBanner();
    }
    if (answer && action === "draw") await cardArrived(before);
  } catch (error) {
    if (error.status === 401) {
      goSignIn();
      return;
    }
    showBanner(error.message);
  } finally {
    setBusy(button, false);
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

function resultNotes(result) {
  return [result.natural ? "natural" : "", result.player_pair ? "player pair" : "",
    result.banker_pair ? "banker pair" : ""].filter(Boolean);
}

// The winner of the round just completed, large, in its colour (shown while the hands show that result).
function renderWinner(result) {
  const banner = byTestId("winner");
  banner.hidden = !result;
  banner.dataset.winner = result ? result.winner : "";
  if (!result) {
    banner.replaceChildren();
    return;
  }
  const notes = resultNotes(result);
  banner.replaceChildren(
    el("span", { class: "winner-word", testid: "winner-text" },
      result.winner === "tie" ? "TIE" : `${result.winner.toUpperCase()} WINS`),
    el("span", { class: "winner-score" }, `Player ${result.player_total} · Banker ${result.banker_total}`),
    notes.length ? el("span", { class: "winner-notes" }, notes.join(" · ")) : "",
  );
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
  // The outline shows who gets the next card, only while a card is due to a hand.
  const due = view.phase === "dealing" && round ? round.next_side : null;
  let winner = null;
  if (round) {
    hands.dataset.showing = "round";
    info.push(`Round ${round.number} · game ${round.game_id}`);
    if (round.last_hand) info.push(el("b", { class: "last-hand" }, "LAST HAND of the shoe"));
    renderHand("player", round.player, round.player_total, due === "player", false);
    renderHand("banker", round.banker, round.banker_total, due === "banker", false);
  } else if (voided) {
    hands.dataset.showing = "voided";
    const void_ = view.last_void && view.last_void.game_id === voided.game_id ? view.last_void : null;
    info.push(el("span", { class: "voided-note", testid: "round-voided" },
      `Round ${voided.number} voided · game ${voided.game_id}${void_ ? ` — “${void_.reason}”` : ""}`));
    renderHand("player", [], 0, false, false);
    renderHand("banker", [], 0, false, false);
  } else if (result) {
    hands.dataset.showing = "result";
    info.push(`Round ${result.round} result · game ${result.game_id}`);
    renderHand("player", result.player, result.player_total, false, result.winner === "player");
    renderHand("banker", result.banker, result.banker_total, false, result.winner === "banker");
    winner = result;
  } else {
    hands.dataset.showing = "empty";
    renderHand("player", [], 0, false, false);
    renderHand("banker", [], 0, false, false);
  }
  renderWinner(winner);
  byTestId("round-info").replaceChildren(...info.flatMap((part, index) => (index ? [" · ", part] : [part])));
}

// The burn under way, or the last one until the next card is dealt: how many, why, and the cards themselves.
function renderBurn(burn) {
  const box = byTestId("burn-box");
  box.hidden = !burn;
  if (!burn) return;
  box.dataset.count = String(burn.cards.length);
  box.dataset.done = String(burn.done);
  const why = BURN_REASONS[burn.reason] || burn.reason;
  const plural = (n) => `${n} card${n === 1 ? "" : "s"}`;
  setText(byTestId("burn-count"), burn.done
    ? `Burned ${plural(burn.count)} ${why}`
    : `Burning ${why}: ${burn.cards.length} of ${burn.count}`);
  byTestId("burn-cards").replaceChildren(...(burn.cards.length
    ? burn.cards.map((code) => cardElement(code)) : [el("span", { class: "muted" }, "no card burned yet")]));
}

function personName(actor) {
  return String(actor || "").replace(/^[a-z_]+:/, "");
}

// The read that stopped the table: the card (or that it could not be read), the source, its number.
function readLine(read, corrected) {
  if (!read) return ["No card read caused this."];
  const facts = [read.source];
  if (read.device_seq !== null && read.device_seq !== undefined) facts.push(`read #${read.device_seq}`);
  if (typeof read.confidence === "number" && read.confidence < 1) facts.push(`confidence ${Math.round(read.confidence * 100)}%`);
  const parts = ["Read that stopped the table: ", read.card ? cardElement(read.card) : el("b", {}, "an unreadable card"),
    ` from ${facts.join(", ")}`];
  if (corrected) parts.push(" · the pit boss names it ", cardElement(corrected));
  return parts;
}

// After a suspension: what the pit boss decided, and why, until another round opens.
function renderDecision(view) {
  const note = byTestId("decision");
  const story = view.last_suspension;
  const show = Boolean(story && story.decision && view.phase !== "suspended");
  note.hidden = !show;
  if (!show) {
    note.replaceChildren();
    return;
  }
  note.dataset.decision = story.decision;
  const fixes = (story.corrections || []).map((fix) => fix.position
    ? `card ${fix.position}: ${fix.original} → ${fix.corrected}` : `the read: ${fix.original || "unreadable"} → ${fix.corrected}`);
  note.replaceChildren(
    el("b", {}, `Pit boss ${personName(story.by)} ${DECISIONS[story.decision] || story.decision}`),
    story.decision_reason ? el("span", { testid: "decision-reason" }, ` — “${story.decision_reason}”`) : "",
    el("span", { class: "muted" }, ` · the table stopped: ${story.detail}${fixes.length ? ` · corrected ${fixes.join(", ")}` : ""}`),
  );
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
  const notes = resultNotes(result);
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
  const plate = byTestId("bead-plate");
  plate.replaceChildren(...beads);
  plate.scrollLeft = plate.scrollWidth; // the latest columns in view
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
  // However long the shoe, its latest column in view at the right edge of the box.
  const marks = [...node.children];
  if (marks.length) {
    const last = marks.reduce((a, b) => (Number(b.style.gridColumn) > Number(a.style.gridColumn) ? b : a));
    node.scrollLeft += last.getBoundingClientRect().right - node.getBoundingClientRect().right + 4;
  }
}

const SEAT_STATUS = {
  free: "free", seated: "seated", waiting: "next round", betting: "betting", playing: "playing", passed: "passed",
  sat_out: "sat out",
};

function renderSeats(seats) {
  // Players' seats (a table with seats only): the seat number, the player's nickname and their status this round.
  const row = byTestId("seats");
  row.hidden = !seats;
  row.replaceChildren(...(seats || []).map((seat) =>
    el("span", { class: "seat", testid: "seat", dataset: { seat: String(seat.seat), status: seat.status },
      title: `seat ${seat.seat}: ${seat.nickname || "free"} (${SEAT_STATUS[seat.status] || seat.status})` },
    el("span", { class: "seat-number" }, String(seat.seat)),
    seat.nickname || "—",
    seat.nickname ? el("span", { class: "seat-status" }, SEAT_STATUS[seat.status] || seat.status) : "")));
}

function renderBetTotals(totals) {
  const entries = Object.entries(totals || {});
  setText(byTestId("bet-totals"), entries.length
    ? entries.map(([bet, amount]) => `${bet.replace("_", " ")} ${(amount / 100).toFixed(2)}`).join(" · ") : "—");
}

function renderChat(messages) {
  const chat = byTestId("chat");
  chat.replaceChildren(...(messages || []).map((m) =>
    el("li", { testid: "chat-message", class: m.system ? "chat-system" : null }, el("b", {}, `${m.nickname}: `), m.shown)));
  chat.scrollTop = chat.scrollHeight; // the newest message in view
}

function renderSources(sources) {
  const items = Object.entries(sources || {}).map(([name, health]) =>
    el("li", { class: "source", testid: "source", dataset: { state: health.state, source: name } },
      el("span", { class: "dot" }),
      el("span", {}, name),
      el("span", { class: "muted" }, `${health.state}${health.detail ? ` — ${health.detail}` : ""}`)));
  byTestId("sources").replaceChildren(...(items.length ? items : [el("li", { class: "muted" }, "no sources")]));
}

// Each button enabled only when the procedure allows its action now; the next action's button stands out.
function renderButtons(view) {
  byTestId("btn-draw").hidden = !view.simulated_shoe;
  const allowed = view.allowed_actions || [];
  const refused = view.refused_actions || {};
  const next = { burn: "draw", deal: "draw" }[view.next_action.action] || view.next_action.action;
  for (const button of document.querySelectorAll("[data-testid=buttons] button")) {
    const action = button.dataset.action;
    button.disabled = !allowed.includes(action);
    button.title = refused[action] || "";
    button.classList.toggle("primary", action === next && !button.disabled);
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
  byTestId("suspension-read").replaceChildren(...(suspension ? readLine(suspension.read, suspension.corrected) : []));
  const facts = [`phase: ${phaseName(view.phase)}`, `dealer: ${personName(view.dealer) || "—"}`, `shoe ${view.shoe}`,
    `cards out ${view.cards_drawn}${view.cut_position !== null ? ` / cut at ${view.cut_position}` : ""}`];
  if (view.last_hand_round !== null) facts.push(`last hand: round ${view.last_hand_round}`);
  setText(byTestId("table-facts"), facts.join(" · "));
  renderHands(view);
  renderBurn(view.last_burn);
  renderDecision(view);
  renderResult(view.last_result);
  renderBeadPlate(view.recent_results || []);
  if (view.roads) renderBigRoad(view.roads);
  renderSeats(view.seats);
  renderBetTotals(view.bet_totals);
  renderChat(view.chat);
  renderSources(view.sources);
  renderButtons(view);
  latest = view;
  if (cardWaiter) cardWaiter(view);
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
