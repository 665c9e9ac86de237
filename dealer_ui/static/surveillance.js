// Surveillance (read-only): search rounds (by game number, a prefix is enough), a round's timeline with every event
// named in words, who did it and the raw device data (with each camera read's crop and whether its hash matches the
// log), corrections beside the reads they correct, the hash-chain verdict of each table, exports, the last 10
// rounds, and each table's live shoe figures. Every time shown or typed is UTC.
import {
  api, byTestId, cardElement, el, formatTime, goSignIn, hideBanner, renderWho, requireSignIn, setText, showBanner, watchTable,
} from "/static/common.js";
import { figuresPanel } from "/static/shoe_figures.js";

const BASE = "/api/surveillance";
let selected = null; // the game id shown

function enc(value) {
  return encodeURIComponent(value);
}

function statusCell(summary, tag = "td") {
  return el(tag, {},
    el("span", { class: `status ${summary.status}`, testid: "round-status" }, summary.status.replace("_", " ")),
    summary.corrected ? el("span", { class: "flag corrected", testid: "flag-corrected" }, "corrected") : "",
    summary.error ? el("span", { class: "flag error", testid: "flag-error" }, "error") : "");
}

function resultText(summary) {
  if (summary.status === "voided") return `void: ${summary.void_reason || ""}`;
  if (!summary.winner) return "";
  return `${summary.winner} ${summary.player_total}–${summary.banker_total}`;
}

function roundRow(summary) {
  const row = el("tr", {
    class: `clickable${summary.game_id === selected ? " selected" : ""}`, testid: "round-row",
    dataset: { gameId: summary.game_id, status: summary.status }, tabindex: 0,
  },
  el("td", { class: "mono" }, formatTime(summary.opened_at).replace(" UTC", "")),
  el("td", { class: "mono game" }, summary.game_id),
  el("td", {}, summary.shoe),
  el("td", {}, summary.dealer || "—"),
  statusCell(summary),
  el("td", { class: summary.status === "voided" ? "" : "result" }, resultText(summary)));
  const open = () => showRound(summary.game_id);
  row.addEventListener("click", open);
  row.addEventListener("keydown", (event) => {
    if (event.key === "Enter") open();
  });
  return row;
}

// A time typed in the search form: UTC, "YYYY-MM-DD", "YYYY-MM-DD HH:MM" or with seconds. Sent without a zone, which
// the server reads as UTC; null when it is not such a time (the form says so).
const UTC_INPUT = /^(\d{4}-\d\d-\d\d)(?:[ T](\d\d:\d\d(?::\d\d)?))?$/;

function utcOf(text, endOfDay) {
  const found = UTC_INPUT.exec(text.trim());
  if (!found) return null;
  return `${found[1]}T${found[2] || (endOfDay ? "23:59:59" : "00:00:00")}`;
}

// Event kinds in words, as surveillance says them; the kind itself stays in the row's data-kind.
const EVENT_NAMES = {
  ShuffleConfirmed: "shuffle confirmed", CutCardPlaced: "cut card placed", BurnRequired: "burn required",
  CardBurned: "card burned", BurnCompleted: "burn completed", BettingOpened: "betting opened",
  BettingClosed: "no more bets", BettingReopened: "betting reopened", CardDealt: "card dealt",
  CutCardAppeared: "cut card appeared", RoundCompleted: "round completed", DealerChanged: "dealer changed",
  TableSuspended: "table suspended", CardReadWhileSuspended: "card read while suspended",
  CardCorrected: "card corrected", PlayContinued: "play continued", TableResumed: "table resumed",
  RoundVoided: "round voided", ShoeEnded: "shoe ended", ShuffleOrdered: "shuffle ordered",
  DecksInspected: "decks inspected", DeckReplaced: "deck replaced", TableClosed: "table closed",
  TableOpened: "table opened", LogOutage: "log outage", SeatTaken: "seat taken", SeatChanged: "seat changed",
  SeatLeft: "seat left", RoundPassed: "round passed", PlayerSatOut: "player sat out",
};

export function eventName(kind) {
  return EVENT_NAMES[kind] || kind.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
}

async function search(event) {
  if (event) event.preventDefault();
  const query = new URLSearchParams();
  const add = (name, value) => {
    if (value !== "" && value !== null && value !== undefined) query.set(name, value);
  };
  add("game", byTestId("search-game").value.trim());
  add("table", byTestId("search-table").value);
  add("shoe", byTestId("search-shoe").value);
  add("dealer", byTestId("search-dealer").value.trim());
  for (const [name, end] of [["since", false], ["until", true]]) {
    const input = byTestId(`search-${name}`);
    if (!input.value.trim()) continue;
    const at = utcOf(input.value, end);
    if (at === null) {
      showBanner(`${name === "since" ? "From" : "To"}: "${input.value}" is not a UTC time like 2024-05-01 13:00`);
      input.focus();
      return;
    }
    add(name, at);
  }
  add("status", byTestId("search-status").value);
  add("limit", byTestId("search-limit").value);
  const body = byTestId("results-body");
  try {
    const answer = await api("GET", `${BASE}/rounds?${query}`);
    const rows = answer.rounds.map(roundRow);
    body.replaceChildren(...(rows.length ? rows : [el("tr", {}, el("td", { colspan: 6, class: "muted" }, "No round matches."))]));
    setText(byTestId("results-count"), `(${answer.rounds.length})`);
    hideBanner();
    byTestId("results").dataset.loaded = "true";
  } catch (error) {
    if (error.status === 401) goSignIn();
    else showBanner(error.message);
  }
}

// A game number or a time is one word: never broken at its hyphens.
function nowrap(text) {
  return el("span", { class: "nowrap" }, text);
}

// Event details in words; the whole data is kept in the row's title for anything not shown.
function details(record, corrections) {
  const data = record.data || {};
  const card = (code) => (code ? cardElement(code) : el("span", { class: "muted" }, "none"));
  const source = () => [data.source ? ` from ${data.source}` : "",
    data.device_seq !== null && data.device_seq !== undefined ? ` · device seq ${data.device_seq}` : "",
    data.confidence !== null && data.confidence !== undefined ? ` · confidence ${data.confidence}` : ""].join("");
  const beside = (position) => {
    const found = corrections.get(position);
    if (!found) return "";
    return el("span", { class: "correction-beside", testid: "correction-beside" },
      " ⟶ corrected to ", card(found.data.corrected), ` by ${found.data.by}: ${found.data.reason} (seq ${found.seq})`);
  };
  switch (record.kind) {
    case "BettingOpened":
      return el("span", {}, `round ${data.round} · `, nowrap(data.game_id), " · betting closes ",
        nowrap(formatTime(data.closes_at)));
    case "BettingClosed":
      return el("span", {}, `round ${data.round} · no more bets${data.early ? " (early)" : ""}`);
    case "CardDealt":
      return el("span", {}, `card ${data.position} to ${data.side} `, card(data.card), source(), beside(data.position));
    case "CardBurned":
      return el("span", {}, "burned ", card(data.card), source());
    case "TableSuspended":
      return el("span", {}, `${String(data.reason || "").replaceAll("_", " ")}: ${data.detail || ""}`,
        data.source ? el("span", {}, " · read ", card(data.card), source()) : "", data.source ? beside(0) : "");
    case "CardReadWhileSuspended":
      return el("span", {}, "read while suspended ", card(data.card), source());
    case "CardCorrected":
      return el("span", { class: "correction-beside" },
        `position ${data.position === 0 ? "0 (the read waiting)" : data.position}: `, card(data.original), " ⟶ ",
        card(data.corrected), ` · ${data.reason} · by ${data.by}`);
    case "RoundVoided":
      return el("span", { testid: "void-reason" }, `round ${data.round} voided by ${data.by}: ${data.reason}`);
    case "PlayContinued":
      return el("span", {}, `continued by ${data.by}${data.reason ? `: ${data.reason}` : ""}`);
    case "RoundCompleted":
      return el("span", {}, `${String(data.winner).toUpperCase()} · Player `, ...(data.player || []).map(card),
        ` = ${data.player_total} · Banker `, ...(data.banker || []).map(card), ` = ${data.banker_total}`,
        data.natural ? " · natural" : "");
    default:
      return el("span", {}, Object.entries(data).filter(([, value]) => value !== null && value !== undefined)
        .map(([key, value]) => `${key}=${typeof value === "object" ? JSON.stringify(value) : value}`).join(" · "));
  }
}

// A camera read's evidence: the thumbnail of its crop (a link to the full crop) when its SHA-256 matches the log, and
// the verdict either way — "hash verified", or "altered" / "missing" / "refused" with the server's sentence.
const EVIDENCE_LABEL = { verified: "hash verified", altered: "ALTERED", missing: "missing", refused: "refused" };

function evidenceCell(evidence) {
  if (!evidence) return "";
  const verified = evidence.status === "verified";
  return el("div", { class: "evidence small", testid: "evidence", dataset: { state: evidence.status } },
    verified ? el("a", { href: evidence.url, target: "_blank", rel: "noopener", testid: "evidence-link" },
      el("img", { src: evidence.url, alt: "camera crop", loading: "lazy", testid: "evidence-thumb" })) : "",
    el("span", { class: `evidence-verdict ${verified ? "ok" : "bad"}`, testid: "evidence-status",
      title: `${evidence.detail} (logged SHA-256 ${evidence.sha256})` }, EVIDENCE_LABEL[evidence.status] || evidence.status),
    verified ? "" : el("div", { class: "muted", testid: "evidence-detail", title: evidence.detail },
      evidence.status === "altered" ? "the crop on disk is not the one logged (hover for both hashes)" : evidence.detail));
}

function exportLink(label, href, testid) {
  return el("a", { class: "button small", href, download: "", testid }, label);
}

async function showRound(gameId) {
  selected = gameId;
  for (const row of document.querySelectorAll("[data-testid=round-row]")) {
    row.classList.toggle("selected", row.dataset.gameId === gameId);
  }
  let answer;
  try {
    answer = await api("GET", `${BASE}/rounds/${enc(gameId)}`);
  } catch (error) {
    if (error.status === 401) goSignIn();
    else showBanner(error.message);
    return;
  }
  history.replaceState(null, "", `?game=${enc(gameId)}`);
  const summary = answer.round;
  const detail = byTestId("round-detail");
  detail.dataset.gameId = summary.game_id;
  byTestId("round-empty").hidden = true;
  byTestId("round-summary").replaceChildren(el("dl", { class: "facts" },
    el("dt", {}, "Game"), el("dd", { class: "mono", testid: "detail-game-id" }, summary.game_id),
    el("dt", {}, "Table"), el("dd", {}, `${summary.table} · shoe ${summary.shoe} · round ${summary.round}`),
    el("dt", {}, "Dealer"), el("dd", {}, summary.dealer || "—"),
    el("dt", {}, "Opened"), el("dd", {}, formatTime(summary.opened_at)),
    el("dt", {}, "Closed"), el("dd", {}, formatTime(summary.closed_at) || "—"),
    el("dt", {}, "Status"), statusCell(summary, "dd"),
    el("dt", {}, "Result"), el("dd", { testid: "detail-result" }, resultText(summary) || "—")));
  const shoe = `${BASE}/tables/${enc(summary.table)}/shoes/${enc(summary.shoe)}/export`;
  const round = `${BASE}/rounds/${enc(summary.game_id)}/export`;
  byTestId("exports").replaceChildren(
    exportLink("Round JSON", `${round}?format=json`, "export-round-json"),
    exportLink("Round CSV", `${round}?format=csv`, "export-round-csv"),
    exportLink(`Shoe ${summary.shoe} JSON`, `${shoe}?format=json`, "export-shoe-json"),
    exportLink(`Shoe ${summary.shoe} CSV`, `${shoe}?format=csv`, "export-shoe-csv"));

  // Corrections by position, to show beside the read they correct (the original read stays in the log).
  const corrections = new Map();
  for (const record of answer.timeline) {
    if (record.kind === "CardCorrected") corrections.set(record.data.position, record);
  }
  const correctedPositions = new Set(corrections.keys());
  const rows = answer.timeline.map((record) => {
    const correctedRead = (record.kind === "CardDealt" && correctedPositions.has(record.data.position)) ||
      (record.kind === "TableSuspended" && record.data.source && correctedPositions.has(0));
    return el("tr", {
      testid: "event", class: correctedRead ? "corrected-read" : "",
      dataset: { kind: record.kind, seq: record.seq, actor: record.actor }, title: JSON.stringify(record.data),
    },
    el("td", {}, record.seq),
    el("td", { class: "mono time" }, formatTime(record.at).replace(" UTC", "")),
    el("td", { class: "actor", testid: "event-actor" }, record.actor),
    el("td", { class: "event-kind", testid: "event-kind" }, eventName(record.kind)),
    el("td", { testid: "event-details" }, details(record, corrections), evidenceCell(record.evidence)),
    el("td", { class: "mono raw", testid: "event-raw" }, record.raw === null || record.raw === undefined ? "" : record.raw));
  });
  byTestId("timeline-body").replaceChildren(...rows);
  byTestId("timeline").hidden = false;
  // Where the round sits under the search (narrower screens), bring it into view.
  if (detail.getBoundingClientRect().top > innerHeight * 0.6) detail.scrollIntoView({ block: "start" });
}

async function verify(table, target) {
  setText(target, "checking…");
  target.dataset.ok = "";
  try {
    const verdict = await api("GET", `${BASE}/tables/${enc(table)}/verify`);
    target.dataset.ok = String(verdict.ok);
    setText(target, verdict.ok
      ? `OK — ${verdict.reason || `${verdict.records} records`}`
      : `BROKEN at seq ${verdict.first_bad_seq}: ${verdict.reason}`);
  } catch (error) {
    target.dataset.ok = "false";
    setText(target, `cannot verify: ${error.message}`);
  }
}

async function recall(table, target) {
  try {
    const answer = await api("GET", `${BASE}/tables/${enc(table)}/recent`);
    const rows = answer.rounds.map(roundRow);
    target.replaceChildren(...(rows.length ? rows : [el("tr", {}, el("td", { colspan: 6, class: "muted" }, "No round yet."))]));
  } catch (error) {
    showBanner(error.message);
  }
}

function tablePanel(table) {
  const verdict = el("span", { class: "verdict", testid: "verdict", dataset: { table } });
  const recent = el("tbody", { testid: "recent-body" });
  const verifyButton = el("button", { type: "button", class: "small", testid: "verify-button" }, "Verify chain");
  verifyButton.addEventListener("click", () => verify(table, verdict));
  const recallButton = el("button", { type: "button", class: "small", testid: "recall-button" }, "Last 10 rounds");
  recallButton.addEventListener("click", () => recall(table, recent));
  const panel = el("div", { testid: "table-panel", dataset: { table } },
    el("h3", {}, `Table ${table} `, verifyButton, " ", recallButton),
    el("p", {}, "Hash chain: ", verdict),
    el("table", { class: "data", testid: "recent", dataset: { table } },
      el("thead", {}, el("tr", {}, ...["opened (UTC)", "game", "shoe", "dealer", "status", "result"]
        .map((name) => el("th", {}, name)))),
      recent));
  verify(table, verdict);
  recall(table, recent);
  return panel;
}

// The live shoe figures of one table at a time (a choice when the studio has several), following the table's view.
function showFigures(tables) {
  const choice = byTestId("figures-table");
  const holder = byTestId("figures-holder");
  let watching = null;
  const follow = (table) => {
    if (watching) watching.stop();
    const panel = figuresPanel(table);
    holder.replaceChildren(panel.root);
    watching = watchTable(table, (view) => panel.follow(view), () => {});
  };
  choice.replaceChildren(...tables.map((table) => el("option", { value: table }, table)));
  choice.hidden = tables.length < 2;
  choice.addEventListener("change", () => follow(choice.value));
  if (tables.length) follow(tables[0]);
}

async function start() {
  const me = await requireSignIn(["surveillance", "pit_boss"]);
  if (!me) return;
  renderWho(me);
  byTestId("search-form").addEventListener("submit", search);
  const clock = byTestId("utc-clock");
  const tick = () => setText(clock, formatTime(new Date().toISOString()).replace(/\.\d+/, ""));
  tick();
  setInterval(tick, 1000);
  const tables = (await api("GET", "/api/tables")).map((view) => view.table);
  const select = byTestId("search-table");
  for (const table of tables) select.append(el("option", { value: table }, table));
  byTestId("tables-panel").replaceChildren(...tables.map(tablePanel));
  showFigures(tables);
  const game = new URLSearchParams(location.search).get("game");
  if (game) showRound(game);
}

start().catch((error) => {
  if (error.status === 401) goSignIn();
  else showBanner(error.message);
});
