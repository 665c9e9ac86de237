// The pit boss view: every table live, suspended tables first with everything needed to decide — what the table
// expected, what was read, the raw device data and camera crop — and the decisions: correct a card, continue, void.
// The dealer's actions are here too, so a pit boss can open and close a table.
//
// Each table's card is built once and then updated in place, so the live feed never wipes what the pit boss types.
// The decision forms exist only while the table is suspended (and are emptied when it resumes); a table that suspends
// rings (a short beep made with the Web Audio API, once sound is switched on: browsers allow sound only after a
// click) and shows in the page's title; each suspended table says how long it has been waiting. Each table shows
// its live shoe figures (shoe_figures.js), and a bet that favours the players beyond the threshold is an alert here.
import {
  api, byTestId, cardElement, el, formatTime, goSignIn, hideBanner, phaseName, renderWho, requireSignIn, setText,
  showBanner, watchTable,
} from "/static/common.js";
import { figuresPanel } from "/static/shoe_figures.js";

const cards = new Map(); // table id → {root, parts, view, connection}

const SIDE_LETTER = { player: "P", banker: "B" };

// The camera's crop of the read that suspended the table, beside the read. The server serves it only once its
// SHA-256 matches the one logged with the read, so a crop that shows is verified; one that does not says why (altered,
// missing, refused). Built once per crop and kept, so the live feed's updates do not reload it.
function evidenceFigure(entry, evidence) {
  if (!evidence) return "";
  if (entry.evidence && entry.evidence.url === evidence.url) return entry.evidence.node;
  const caption = el("figcaption", { testid: "evidence-status" }, "checking the crop against the log…");
  const image = el("img", { src: evidence.url, alt: "the camera's crop of this read", testid: "evidence-crop" });
  const node = el("figure", { class: "evidence", testid: "evidence", dataset: { state: "checking" } },
    el("a", { href: evidence.url, target: "_blank", rel: "noopener", title: `SHA-256 ${evidence.sha256}` }, image),
    caption);
  image.addEventListener("load", () => {
    node.dataset.state = "verified";
    setText(caption, "camera crop · hash verified");
  });
  image.addEventListener("error", async () => {
    image.hidden = true;
    try {
      await api("GET", evidence.url);
      node.dataset.state = "error";
      setText(caption, "the crop could not be shown");
    } catch (error) {
      node.dataset.state = error.status === 409 ? "altered" : "unavailable";
      setText(caption, error.status === 409 ? `ALTERED: ${error.message}` : error.message);
    }
  });
  entry.evidence = { url: evidence.url, node };
  return node;
}

// Sound: one AudioContext, made and resumed on a click (the page's "sound" button, or any click), since browsers
// start it muted until the person interacts. A beep is two short tones; the count is kept for the tests.
let audio = null;

function enableSound() {
  if (!audio) audio = new AudioContext();
  if (audio.state === "suspended") audio.resume();
  return audio;
}

function beep() {
  document.body.dataset.alerts = String(Number(document.body.dataset.alerts || 0) + 1);
  if (!audio || document.body.dataset.sound !== "on") return;
  const start = audio.currentTime + 0.01;
  for (const [offset, frequency] of [[0, 880], [0.22, 660]]) {
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    tone.type = "sine";
    tone.frequency.value = frequency;
    gain.gain.setValueAtTime(0.0001, start + offset);
    gain.gain.exponentialRampToValueAtTime(0.3, start + offset + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.0001, start + offset + 0.18);
    tone.connect(gain).connect(audio.destination);
    tone.start(start + offset);
    tone.stop(start + offset + 0.2);
  }
  document.body.dataset.beeps = String(Number(document.body.dataset.beeps || 0) + 1);
}

function soundButton() {
  const button = byTestId("sound-toggle");
  const show = () => {
    const on = document.body.dataset.sound === "on";
    setText(button, on ? "Sound on" : "Sound off: click to hear alerts");
    button.classList.toggle("primary", !on);
  };
  button.addEventListener("click", () => {
    const on = document.body.dataset.sound !== "on";
    document.body.dataset.sound = on ? "on" : "off";
    localStorage.setItem("pitboss-sound", document.body.dataset.sound);
    if (on) {
      enableSound();
      beep(); // so the pit boss hears what an alert sounds like
    }
    show();
  });
  // Sound stays on across visits; the browser still needs one click on the page before it plays.
  document.body.dataset.sound = localStorage.getItem("pitboss-sound") === "on" ? "on" : "off";
  if (document.body.dataset.sound === "on") document.addEventListener("click", enableSound, { once: true });
  show();
}

// "2 min 05 s": how long a table has been waiting for a pit boss.
function waitingText(seconds) {
  const whole = Math.max(0, Math.floor(seconds));
  if (whole < 60) return `${whole} s`;
  const minutes = Math.floor(whole / 60);
  if (minutes < 60) return `${minutes} min ${String(whole % 60).padStart(2, "0")} s`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, "0")} min`;
}

function post(table, path, body) {
  return api("POST", `/api/tables/${encodeURIComponent(table)}/${path}`, body);
}

async function decide(table, button, request, after) {
  button.disabled = true;
  try {
    const answer = await request();
    hideBanner();
    if (answer && answer.table) update(answer.table);
    if (after) after();
  } catch (error) {
    if (error.status === 401) goSignIn();
    else showBanner(`${table}: ${error.message}`);
  } finally {
    button.disabled = false;
  }
}

function facts(pairs) {
  return el("dl", { class: "facts" }, ...pairs.flatMap(([name, value, testid]) =>
    [el("dt", {}, name), el("dd", { testid }, value)]));
}

function expectedText(view) {
  const suspension = view.suspension;
  if (!suspension) return "";
  switch (suspension.interrupted) {
    case "dealing":
      return view.round && view.round.next_side
        ? `dealing: the next card was due to ${view.round.next_side.toUpperCase()} (position ${view.round.cards.length + 1})`
        : "dealing: the deal was complete";
    case "burning":
      return view.burn ? `burning: ${view.burn.remaining} card(s) still to burn (${view.burn.reason})` : "burning";
    case "betting_open":
      return "betting was open: no card was due";
    case "ready":
      return "between rounds: no card was due until betting opened and closed";
    case "awaiting_shuffle":
      return "the shoe was waiting to be shuffled";
    case "awaiting_cut":
      return "the shoe was waiting for its cut card";
    default:
      return phaseName(suspension.interrupted);
  }
}

function readView(entry, read) {
  if (!read) return el("span", { class: "muted" }, "no card read caused this");
  return el("div", { class: "read-with-evidence" },
    el("div", {},
      read.card ? cardElement(read.card) : el("strong", {}, "unreadable card"),
      ` from ${read.source}`,
      read.device_seq !== null && read.device_seq !== undefined ? ` · device seq ${read.device_seq}` : "",
      read.confidence !== null && read.confidence !== undefined ? ` · confidence ${read.confidence}` : "",
      el("div", { class: "raw mono", testid: "raw" }, read.raw === null || read.raw === undefined ? "(no raw data)" : read.raw)),
    evidenceFigure(entry, read.evidence));
}

function roundCards(round) {
  if (!round || !round.cards.length) return el("span", { class: "muted" }, round ? "no card dealt yet" : "no round");
  return el("span", {}, ...round.cards.map((item) =>
    el("span", { class: "positioned", testid: "round-card", dataset: { position: item.position } },
      `${item.position}·${SIDE_LETTER[item.side] || item.side} `, cardElement(item.card), " ")));
}

function build(table) {
  const parts = {};
  const input = (testid, attributes = {}) => el("input", { testid, type: "text", ...attributes });
  parts.title = el("span", {}, `Table ${table}`);
  parts.phase = el("span", { class: "phase-tag", testid: "phase" });
  parts.connection = el("span", { class: "connection", testid: "connection", dataset: { state: "connecting" } }, "connecting…");
  parts.waiting = el("span", { class: "waiting", testid: "waiting", hidden: true });
  parts.context = el("div", { testid: "context" });
  parts.suspension = el("div", { testid: "suspension" });

  parts.position = el("select", { testid: "correct-position", name: "position" });
  parts.code = input("correct-card", { placeholder: "card, e.g. QH", maxlength: 4, size: 6, required: true });
  parts.correctReason = input("correct-reason", { placeholder: "reason", maxlength: 500, required: true });
  const correctButton = el("button", { type: "submit", testid: "correct-submit" }, "Correct card");
  const correctForm = el("form", { testid: "correct-form" },
    el("label", {}, "Card", parts.position), el("label", {}, "Really", parts.code),
    el("label", {}, "Reason", parts.correctReason), correctButton);
  correctForm.addEventListener("submit", (event) => {
    event.preventDefault();
    decide(table, correctButton, () => post(table, "correct", {
      position: Number(parts.position.value), card: parts.code.value.trim().toUpperCase(),
      reason: parts.correctReason.value.trim(),
    }), () => { parts.code.value = ""; parts.correctReason.value = ""; });
  });

  parts.continueReason = input("continue-reason", { placeholder: "reason (optional)", maxlength: 500 });
  const continueButton = el("button", { type: "submit", class: "primary", testid: "continue-submit" }, "Continue play");
  const continueForm = el("form", { testid: "continue-form" },
    el("label", {}, "Continue", parts.continueReason), continueButton);
  continueForm.addEventListener("submit", (event) => {
    event.preventDefault();
    decide(table, continueButton, () => post(table, "continue", { reason: parts.continueReason.value.trim() }),
      () => { parts.continueReason.value = ""; });
  });

  parts.voidReason = input("void-reason", { placeholder: "reason (required)", maxlength: 500, required: true });
  const voidButton = el("button", { type: "submit", class: "danger", testid: "void-submit" }, "Void round, refund all");
  const voidForm = el("form", { testid: "void-form" }, el("label", {}, "Void", parts.voidReason), voidButton);
  voidForm.addEventListener("submit", (event) => {
    event.preventDefault();
    decide(table, voidButton, () => post(table, "void", { reason: parts.voidReason.value.trim() }),
      () => { parts.voidReason.value = ""; });
  });
  parts.decision = el("div", { class: "decision", testid: "decision", hidden: true },
    correctForm, continueForm, voidForm);

  const dealerAction = (label, testid, path, body) => {
    const button = el("button", { type: "button", class: "small", testid });
    button.textContent = label;
    button.addEventListener("click", () => decide(table, button, () => post(table, path, body)));
    return button;
  };
  parts.dealerActions = el("div", { class: "actions-row", testid: "dealer-actions" },
    dealerAction("Confirm shuffle", "act-shuffle", "shuffle"),
    dealerAction("Place cut card", "act-cut", "cut", {}),
    dealerAction("Open betting", "act-open-betting", "open-betting"),
    dealerAction("No more bets", "act-close-betting", "close-betting"),
    dealerAction("Cut card out", "act-cut-card-out", "cut-card-out"),
    el("a", { class: "button small", href: `/static/console.html?table=${encodeURIComponent(table)}`,
      testid: "console-link" }, "Console"));

  // Closing and opening the table are the pit boss's own decisions (between rounds or shoes).
  const closeButton = el("button", { type: "button", class: "small danger", testid: "act-close-table" }, "Close table");
  closeButton.addEventListener("click", () => {
    const reason = prompt("Why is the table closing?", "end of the session");
    if (reason && reason.trim()) decide(table, closeButton, () => post(table, "close", { reason: reason.trim() }));
  });
  const openButton = el("button", { type: "button", class: "small", testid: "act-open-table" }, "Open table");
  openButton.addEventListener("click", () => decide(table, openButton, () => post(table, "open")));
  parts.dealerActions.append(closeButton, openButton);

  // An early shuffle after a completed round, and the deck inspections (seed 000 §3.2.3, §3.1): the pit boss's own.
  parts.orderShuffle = el("button", { type: "button", class: "small danger", testid: "act-order-shuffle", hidden: true },
    "Order a shuffle");
  parts.orderShuffle.addEventListener("click", () => {
    const reason = prompt("Why is the shoe ending now?", "");
    if (reason && reason.trim()) {
      decide(table, parts.orderShuffle, () => post(table, "order-shuffle", { reason: reason.trim() }));
    }
  });
  parts.approveInspection = el("button", { type: "button", class: "small primary", testid: "act-inspect-decks",
    hidden: true }, "Approve the inspection");
  parts.approveInspection.addEventListener("click", () => {
    const dealer = prompt("Which dealer inspected the decks with you?", (entry.view && entry.view.dealer) || "");
    if (dealer && dealer.trim()) {
      decide(table, parts.approveInspection, () => post(table, "inspect-decks", { dealer: dealer.trim() }));
    }
  });
  parts.replaceDeck = el("button", { type: "button", class: "small", testid: "act-replace-deck", hidden: true },
    "Replace a deck");
  parts.replaceDeck.addEventListener("click", () => {
    const deck = prompt("Which deck is replaced?", "");
    const reason = deck && deck.trim() ? prompt(`What is wrong with deck ${deck.trim()}?`, "") : "";
    if (reason && reason.trim()) {
      decide(table, parts.replaceDeck, () => post(table, "replace-deck", { deck: deck.trim(), reason: reason.trim() }));
    }
  });
  parts.dealerActions.append(parts.orderShuffle, parts.approveInspection, parts.replaceDeck);

  parts.figures = figuresPanel(table, (figures) => figuresAlert(table, figures));
  const root = el("article", { class: "panel table-card", testid: "table-card", dataset: { table } },
    el("h3", {}, parts.title, parts.phase, parts.waiting, parts.connection),
    el("div", { class: "card-body" },
      el("div", { class: "card-main" }, parts.context, parts.suspension, parts.decision,
        el("h4", { class: "muted" }, "Table actions"), parts.dealerActions),
      parts.figures.root));
  const entry = { root, parts, view: null, positionsKey: "", figuresAlerting: "" };
  return entry;
}

function updatePositions(entry, view) {
  const round = view.round;
  const read = view.suspension ? view.suspension.read : null;
  const key = JSON.stringify([round ? round.cards : [], read ? read.card : null, view.suspension?.corrected]);
  if (key === entry.positionsKey) return;
  entry.positionsKey = key;
  const select = entry.parts.position;
  const previous = select.value;
  const options = [];
  if (read) {
    const shown = view.suspension.corrected ? `${view.suspension.corrected} (corrected)` : read.card || "unreadable";
    options.push(el("option", { value: "0" }, `0 · the read waiting: ${shown}`));
  }
  for (const item of round ? round.cards : []) {
    options.push(el("option", { value: String(item.position) },
      `${item.position} · ${item.side} · ${item.card}`));
  }
  if (!options.length) options.push(el("option", { value: "", disabled: true }, "no card to correct"));
  select.replaceChildren(...options);
  if ([...select.options].some((option) => option.value === previous)) select.value = previous;
}

// A bet newly beyond the threshold: the banner says so and the alert sounds (the figures panel shows every detail).
function figuresAlert(table, figures) {
  const entry = cards.get(table);
  const alerting = (figures.alerting || []).join(" ");
  if (!entry || alerting === entry.figuresAlerting) return;
  const fresh = (figures.alerting || []).filter((bet) => !entry.figuresAlerting.split(" ").includes(bet));
  entry.figuresAlerting = alerting;
  entry.root.classList.toggle("edge-alerting", Boolean(alerting));
  if (fresh.length) {
    const names = fresh.map((bet) => bet.replaceAll("_", " ")).join(", ");
    showBanner(`${table}: the players' edge on ${names} is beyond the alert threshold of ` +
      `${figures.edge_alert_threshold}%, with ${figures.cards_remaining} cards left in shoe ${figures.shoe}`);
    beep();
  }
}

// Leaving a suspension: the decision forms are emptied, so nothing typed for one error is sent for another.
function clearDecision(parts) {
  for (const input of [parts.code, parts.correctReason, parts.continueReason, parts.voidReason]) input.value = "";
  parts.position.replaceChildren();
}

function update(view) {
  const entry = cards.get(view.table);
  if (!entry) return;
  if (entry.view && view.seq < entry.view.seq) return;
  const wasSuspended = entry.view ? entry.view.phase === "suspended" : null;
  entry.view = view;
  const { root, parts } = entry;
  const suspended = view.phase === "suspended";
  root.dataset.phase = view.phase;
  root.classList.toggle("suspended", suspended);
  parts.phase.className = `phase-tag${suspended ? " suspended" : ""}`;
  setText(parts.phase, phaseName(view.phase));

  const sources = Object.entries(view.sources || {}).map(([name, health]) =>
    `${name}: ${health.state}${health.detail ? ` (${health.detail})` : ""}`).join("; ") || "none";
  const betting = view.phase === "betting_open" ? ` · light ${view.light}, ${Math.ceil(view.seconds_left)} s` : "";
  parts.context.replaceChildren(facts([
    ["Next", `${view.next_action.text}${view.next_action.detail ? ` — ${view.next_action.detail}` : ""}${betting}`,
      "next-action"],
    ["Dealer", view.dealer || "—", "dealer"],
    ["Shoe", `shoe ${view.shoe} · ${view.cards_drawn} cards out${view.cut_position !== null ?
      ` · cut card at ${view.cut_position}` : ""}${view.last_hand_round !== null ? ` · last hand: round ${view.last_hand_round}` : ""}`],
    ["Round", view.round ? el("span", {}, `${view.round.game_id} · `, roundCards(view.round),
      ` Player ${view.round.player_total} · Banker ${view.round.banker_total}`) : "—", "round"],
    ["Last result", view.last_result ? `${view.last_result.winner} ${view.last_result.player_total}–` +
      `${view.last_result.banker_total} (${view.last_result.game_id})` : "—"],
    ["Sources", sources, "sources"],
  ]));

  const waiting = suspended && view.suspension.waiting_seconds !== null && view.suspension.waiting_seconds !== undefined
    ? waitingText(view.suspension.waiting_seconds) : "";
  parts.waiting.hidden = !waiting;
  const since = suspended && view.suspension.since ? formatTime(view.suspension.since).slice(11).replace(/\.\d+/, "") : "";
  setText(parts.waiting, waiting ? `waiting ${waiting}${since ? ` · since ${since}` : ""}` : "");
  parts.waiting.title = suspended && view.suspension.since ? `suspended at ${formatTime(view.suspension.since)}` : "";
  if (suspended) {
    const suspension = view.suspension;
    parts.suspension.replaceChildren(
      el("h4", {}, "Suspended — the table waits for your decision"),
      facts([
        ["Why", `${suspension.reason.replaceAll("_", " ")}: ${suspension.detail}`, "suspension-reason"],
        ["Expected", expectedText(view), "expected"],
        ["Read", readView(entry, suspension.read), "read"],
        ["Corrected", suspension.corrected ? cardElement(suspension.corrected) : "—", "corrected"],
      ]));
    updatePositions(entry, view);
  } else {
    parts.suspension.replaceChildren();
    if (entry.positionsKey || wasSuspended) clearDecision(parts);
    entry.positionsKey = "";
  }
  parts.decision.hidden = !suspended;
  if (suspended && wasSuspended === false) beep(); // the table has just suspended
  if (!entry.figuresSeq || entry.figuresSeq !== view.seq) {
    entry.figuresSeq = view.seq;
    parts.figures.follow(view);
  }
  parts.orderShuffle.hidden = view.phase !== "ready";
  parts.approveInspection.hidden = parts.replaceDeck.hidden = !view.inspection;

  const home = suspended ? byTestId("suspended-tables") : byTestId("tables");
  if (root.parentElement !== home) home.append(root);
  const count = [...cards.values()].filter((item) => item.view && item.view.phase === "suspended").length;
  byTestId("no-suspended").hidden = count > 0;
  const names = [...cards.values()].filter((item) => item.view && item.view.phase === "suspended")
    .map((item) => item.view.table);
  setText(byTestId("suspended-count"), count ? `${count} table${count > 1 ? "s" : ""} suspended: ${names.join(", ")}` : "");
  document.title = count ? `⚠ (${count}) SUSPENDED ${names.join(", ")} — Pit boss` : "Pit boss";
  document.body.classList.toggle("alerting", count > 0);
}

function status(table, state, detail, code) {
  const entry = cards.get(table);
  const badge = entry.parts.connection;
  badge.dataset.state = state;
  entry.root.classList.toggle("stale", state !== "live");
  if (state === "live") setText(badge, "live");
  else if (state === "reconnecting") setText(badge, "disconnected — retrying");
  else if (state === "connecting") setText(badge, "connecting…");
  else {
    setText(badge, "disconnected");
    if (code === 4401) goSignIn();
    else showBanner(`${table}: ${detail}`);
  }
}

async function start() {
  const me = await requireSignIn(["pit_boss"]);
  if (!me) return;
  renderWho(me);
  soundButton();
  const tables = await api("GET", "/api/tables");
  for (const view of tables) {
    const entry = build(view.table);
    cards.set(view.table, entry);
    byTestId("tables").append(entry.root);
    update(view);
    watchTable(view.table, update, (state, detail, code) => status(view.table, state, detail, code));
  }
}

start().catch((error) => {
  if (error.status === 401) goSignIn();
  else showBanner(error.message);
});
