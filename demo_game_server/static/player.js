// The player page of the demo game server. It talks only to its game server (same origin), never to the studio.
// Bets are staged on the spots, then confirmed with "Deal" (seed 000's confirm step); undo, double and repeat act on
// the bets the studio holds. Amounts are integers in minor units (cents) throughout; only display formats them.
"use strict";

const params = new URLSearchParams(location.search);
const PLAYER = params.get("player");
const TABLE = params.get("table") || "T1";
const $ = (id) => document.querySelector(`[data-testid="${id}"]`);
const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; };

const S = {
  me: null, pub: null, seq: 0, chip: 2500, selected: "player", staged: {}, placedOrder: [],
  deadline: null, warning: 5, bettingOpen: false, round: null, cards: [], suspended: false, bank: null, chatAfter: 0,
  seats: null,
};

function money(cents) {
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  const units = Math.floor(abs / 100).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${sign}${units}.${String(abs % 100).padStart(2, "0")}`;
}

async function api(method, path, body) {
  const answer = await fetch(path, {
    method, headers: body ? { "Content-Type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined,
  });
  const data = await answer.json().catch(() => ({}));
  if (!answer.ok) throw new Error(typeof data.detail === "string" ? data.detail : `${answer.status} ${answer.statusText}`);
  return data;
}

function say(text, kind) {
  const box = $("bet-messages");
  const line = el("div", kind || "", text);
  box.prepend(line);
  while (box.children.length > 6) box.lastChild.remove();
}

function notice(text, kind) {
  const box = $("notice");
  box.hidden = !text;
  box.textContent = text || "";
  box.dataset.kind = kind || "";
}

// ---- the table ---------------------------------------------------------------------------------------------------

function showCards() {
  for (const side of ["player", "banker"]) {
    const box = $(`${side}-cards`);
    box.replaceChildren(...S.cards.filter((c) => c.side === side).map((c) => {
      const suit = c.card.slice(-1);
      const symbol = { S: "♠", H: "♥", D: "♦", C: "♣" }[suit];
      return el("span", `card${"HD".includes(suit) ? " red" : ""}`, c.card.slice(0, -1) + symbol);
    }));
    const values = S.cards.filter((c) => c.side === side).map((c) => {
      const rank = c.card.slice(0, -1);
      return rank === "A" ? 1 : ["10", "J", "Q", "K"].includes(rank) ? 0 : Number(rank);
    });
    $(`${side}-total`).textContent = values.length ? `(${values.reduce((a, b) => a + b, 0) % 10})` : "";
  }
}

function tick() {
  const light = $("light");
  let left = 0;
  if (S.bettingOpen && S.deadline !== null && !S.suspended) left = Math.max(0, (S.deadline - Date.now()) / 1000);
  const colour = left <= 0 ? "red" : left <= S.warning ? "yellow" : "green";
  light.dataset.light = colour;
  $("light-text").textContent = S.suspended ? "suspended" : colour === "red" ? "no more bets" : colour === "yellow" ? "hurry" : "place your bets";
  $("seconds").textContent = left > 0 ? `${Math.ceil(left)} s` : "";
  const open = left > 0;
  document.querySelectorAll(".spot, .chip, [data-action=deal], [data-action=undo], [data-action=double], [data-action=repeat], [data-action=pass]")
    .forEach((b) => { b.disabled = !open || (b.classList.contains("chip") && S.me && Number(b.dataset.value) > S.me.balance); });
}

function openRound(round, closesInMs) {
  S.round = round;
  S.bettingOpen = true;
  S.deadline = Date.now() + closesInMs;
  // The light turns yellow 5 s before the end (the studio's default warning), or at the last third of a short timer.
  S.warning = Math.min(5, closesInMs / 3000);
  S.staged = {};
  $("game-id").textContent = round.game_id;
  $("round-number").textContent = `round ${round.number}`;
  $("outcome").hidden = true;
  S.cards = [];
  showCards();
  showSpots();
}

function showRoads(roads) {
  if (!roads) return;
  // Seed 004's list: B for the banker, J for the player, a dash for a tie, in the order played; a new column at each
  // change of winner, ties in the column where they fell (a tie before any winner starts the first column).
  const results = $("results-list");
  const listed = [];
  let current = null;
  for (const result of roads.bead_plate || "") {
    if (result !== "T" && current !== null && result !== current) listed.push([]);
    if (!listed.length) listed.push([]);
    if (result !== "T") current = result;
    listed[listed.length - 1].push(result);
  }
  results.replaceChildren(...listed.map((column) => {
    const col = el("div", "col");
    col.append(...column.map(mark));
    return col;
  }));
  const columns = roads.big_road || [];
  results.scrollLeft = results.scrollWidth;
  const big = $("big-road");
  big.replaceChildren(...columns.map((column) => {
    const col = el("div", "col");
    column.forEach(([winner, ties]) => { const m = mark(winner); if (ties) m.title = `${ties} tie(s)`; if (ties) m.textContent += ties; col.append(m); });
    return col;
  }));
  big.scrollLeft = big.scrollWidth;
  const bead = $("bead-plate");
  bead.replaceChildren(...[...(roads.bead_plate || "")].map(mark));
  bead.scrollLeft = bead.scrollWidth;
  const names = { big_eye_boy: "Big eye boy", small_road: "Small road", cockroach_pig: "Cockroach pig" };
  $("derived-roads").replaceChildren(...Object.entries(names).map(([key, name]) =>
    el("div", "", `${name}: ${(roads[key] || "").slice(-40) || "—"}`)));
  const counts = roads.counts || {};
  $("counts").textContent = Object.entries(counts).map(([k, v]) => `${k.replace(/_/g, " ")} ${v}`).join(" · ");
}

function mark(winner) {
  const kind = { B: "b", P: "p", T: "t" }[winner] || "t";
  const m = el("span", `mark ${kind}`);
  const letter = el("span", "", { b: "B", p: "J", t: "–" }[kind]);
  m.append(letter);
  return m;
}

// ---- bets --------------------------------------------------------------------------------------------------------

function placedNow() {
  if (!S.me || !S.round) return {};
  const sums = {};
  for (const bet of S.me.bets) {
    if (bet.game_id === S.round.game_id && bet.status !== "cancelled") sums[bet.bet_type] = (sums[bet.bet_type] || 0) + bet.stake;
  }
  return sums;
}

function showSpots() {
  const placed = placedNow();
  document.querySelectorAll(".spot").forEach((spot) => {
    const type = spot.dataset.spot;
    const amt = spot.querySelector(".amt");
    amt.replaceChildren();
    const parts = type === "2 way" ? ["player_pair", "banker_pair"] : type === "3 way" ? ["player_pair", "banker_pair", "tie"] : [type];
    if (parts.length === 1 && placed[type]) amt.append(el("span", "", money(placed[type])));
    if (S.staged[type]) amt.append(el("span", "staged", ` +${money(S.staged[type])}`));
    spot.classList.toggle("selected", type === S.selected);
  });
  const covers = { "2 way": 2, "3 way": 3 }; // a 2 Way or 3 Way chip stakes its amount on each bet it covers
  $("staged-total").textContent = money(Object.entries(S.staged).reduce((sum, [type, stake]) => sum + stake * (covers[type] || 1), 0));
  $("placed-total").textContent = money(Object.values(placed).reduce((a, b) => a + b, 0));
}

function stage(type, delta) {
  S.selected = type;
  const next = (S.staged[type] || 0) + delta;
  if (next > 0) S.staged[type] = next; else delete S.staged[type];
  showSpots();
}

function reportPlaced(bets, verb) {
  for (const bet of bets) {
    if (bet.notice) say(`${label(bet.bet_type)}: ${bet.notice}`, "max");
    else say(`${label(bet.bet_type)} ${money(bet.stake)} ${verb || "accepted"}`);
  }
}

function label(type) { return type.replace(/_/g, " "); }

async function deal() {
  const bets = Object.entries(S.staged).map(([bet_type, stake]) => ({ bet_type, stake }));
  if (!bets.length) { say("Stake a chip on a spot first, then Deal.", "refused"); return; }
  S.staged = {};
  try {
    const { answers } = await api("POST", `/api/tables/${TABLE}/bets`, { player: PLAYER, bets });
    for (const answer of answers) {
      if (answer.refused) say(`${label(answer.bet_type)} refused: ${answer.refused}`, "refused");
      else reportPlaced(answer.bets);
    }
  } catch (error) { say(`Refused: ${error.message}`, "refused"); }
  await refreshMe();
}

async function betAction(action) {
  try {
    const answer = await api("POST", `/api/tables/${TABLE}/bets/${action}`, { player: PLAYER });
    reportPlaced(answer.bets, action === "undo" ? "taken back" : `accepted (${action})`);
  } catch (error) { say(`${action} refused: ${error.message}`, "refused"); }
  await refreshMe();
}

// ---- the player, the seats, the bank, the chat ---------------------------------------------------------------------

async function refreshMe() {
  S.me = await api("GET", `/api/players/${PLAYER}`);
  $("nickname").textContent = S.me.nickname;
  $("balance").textContent = money(S.me.balance);
  $("points").textContent = String(S.me.points);
  const history = $("history");
  history.replaceChildren(...S.me.bets.slice().reverse().slice(0, 30).map((bet) => {
    const how = bet.status === "settled" ? `${bet.verdict}, returned ${money(bet.returned || 0)}` : bet.status;
    return el("div", "", `${bet.game_id.slice(-4)} ${label(bet.bet_type)} ${money(bet.stake)} — ${how}`);
  }));
  showSpots();
  tick();
}

function showOutcome(lastRound) {
  const box = $("outcome");
  box.hidden = false;
  box.replaceChildren();
  const mine = lastRound.bets.map((bet) => el("div", "", `${label(bet.bet_type)} ${money(bet.stake)}: ${bet.verdict || bet.status}, returned ${money(bet.returned || 0)}`));
  box.append(...mine, el("div", "", `This round: ${lastRound.net >= 0 ? "+" : ""}${money(lastRound.net)}, points ${lastRound.points >= 0 ? "+" : ""}${lastRound.points}`));
  box.dataset.game = lastRound.game_id;
}

async function settled(gameId, headline) {
  const box = $("outcome");
  box.hidden = false;
  box.replaceChildren(headline);
  // The player's last round is this one once it is settled, if they played it (with bets, or as its banker). The
  // result can reach the page a moment before its settlement is readable: a few tries cover that.
  const banker = S.bank && S.bank.banker && S.bank.banker.player_id === PLAYER;
  for (let i = 0; i < 10; i += 1) {
    await refreshMe();
    const last = S.me.last_round;
    if (last && last.game_id === gameId) {
      showOutcome(last);
      box.prepend(headline);
      return;
    }
    if (!banker && !S.me.bets.some((b) => b.game_id === gameId && b.status !== "cancelled")) return;
    await new Promise((r) => setTimeout(r, 400));
  }
}

async function refreshSeats() {
  const answer = await api("GET", `/api/tables/${TABLE}/seats`).catch(() => null);
  const box = $("seats");
  if (!answer || !answer.seats) { box.textContent = "This table has no seats: anyone may bet."; S.seats = null; return; }
  S.seats = answer.seats;
  // The buttons are updated in place, not replaced: a refresh (another player's seat, a poll) landing between the
  // press and the release of a click would otherwise swallow the click.
  let buttons = [...box.querySelectorAll("button.seat")];
  if (buttons.map((b) => b.dataset.seat).join() !== answer.seats.map((seat) => String(seat.seat)).join()) {
    buttons = answer.seats.map((seat) => {
      const b = el("button", "seat", "");
      b.dataset.seat = String(seat.seat);
      b.setAttribute("data-testid", `seat-${seat.seat}`);
      b.addEventListener("click", () => seatAction(S.seats.some((s) => s.player_id === PLAYER) ? "change" : "take", seat.seat));
      return b;
    });
    box.replaceChildren(...buttons);
  }
  answer.seats.forEach((seat, k) => {
    const b = buttons[k];
    b.className = `seat${seat.player_id === PLAYER ? " mine" : ""}`;
    b.textContent = `${seat.seat}: ${seat.nickname || "free"}${seat.status && seat.status !== "free" ? ` (${seat.status})` : ""}`;
    b.disabled = seat.status !== "free";
  });
}

async function seatAction(action, seat) {
  try { await api("POST", `/api/tables/${TABLE}/seats/${action}`, { player: PLAYER, seat: seat ?? null }); say(`Seat: ${action} done`); }
  catch (error) { say(`Seat ${action} refused: ${error.message}`, "refused"); }
  await refreshSeats();
}

async function refreshBank() {
  const bank = await api("GET", `/api/tables/${TABLE}/banker`).catch(() => null);
  S.bank = bank;
  const box = $("bank");
  const actions = $("bank-actions");
  if (!bank || bank.house_only) { box.textContent = "The house banks this table."; actions.hidden = true; return; }
  actions.hidden = false;
  const holder = bank.banker ? bank.banker.player_id : null;
  const approved = bank.round && bank.round.approved_by;
  let text = holder ? `Banker: ${holder === PLAYER ? "you" : "another player"}${bank.banker.auto_approve ? " (auto-approve)" : ""}`
    : `The house banks; taking the bank needs ${money(bank.required_balance)} and ${bank.required_points} points.`;
  if (holder && bank.round) text += approved ? ` · round ${bank.round.game_id.slice(-4)} approved` : " · waiting for the banker's approval";
  box.textContent = text;
  $("bank-take").hidden = Boolean(holder);
  $("bank-approve").hidden = holder !== PLAYER;
  $("bank-approve").disabled = Boolean(approved) || !bank.round;
  $("bank-leave").hidden = holder !== PLAYER;
}

async function bankAction(action) {
  const body = { player: PLAYER, auto_approve: $("auto-approve").checked };
  try { await api("POST", `/api/tables/${TABLE}/banker/${action}`, body); say(`Bank: ${action} done`); }
  catch (error) { say(`Bank ${action} refused: ${error.message}`, "refused"); }
  await refreshBank();
}

async function pollChat() {
  const answer = await api("GET", `/api/tables/${TABLE}/chat?after=${S.chatAfter}`).catch(() => null);
  if (answer && answer.messages.length) {
    const box = $("chat");
    for (const m of answer.messages) {
      const line = el("div", m.system ? "system" : "");
      line.append(el("strong", "", `${m.nickname}: `), document.createTextNode(m.shown));
      box.append(line);
      S.chatAfter = Math.max(S.chatAfter, m.id);
    }
    box.scrollTop = box.scrollHeight;
  }
}

// ---- the results feed --------------------------------------------------------------------------------------------

function onMessage(m) {
  S.seq = Math.max(S.seq, m.seq);
  switch (m.type) {
    case "round_opened":
      openRound({ number: m.round, game_id: m.game_id }, Date.parse(m.closes_at) - Date.parse(m.at));
      if (!S.suspended) notice(""); // the last suspension's outcome stays up until the next round opens
      refreshMe(); refreshBank();
      break;
    case "betting_reopened":
      S.bettingOpen = true; S.deadline = Date.now() + Date.parse(m.closes_at) - Date.parse(m.at);
      break;
    case "betting_closed":
      S.bettingOpen = false; S.staged = {}; showSpots(); refreshMe();
      break;
    case "card":
      S.cards.push({ side: m.side, card: m.card }); showCards();
      break;
    case "correction": {
      const card = S.cards[m.position - 1]; if (card) card.card = m.corrected; showCards();
      say(`Card ${m.position} corrected: ${m.original} → ${m.corrected}`);
      break;
    }
    case "result": {
      S.bettingOpen = false;
      S.cards = [...m.player.map((card) => ({ side: "player", card })), ...m.banker.map((card) => ({ side: "banker", card }))];
      showCards();
      showRoads(m.roads);
      const headline = el("div", "winner", `${{ player: "Player", banker: "Banker", tie: "Tie" }[m.winner]} wins ${m.player_total}–${m.banker_total}` +
        `${m.natural ? " (natural)" : ""}${m.player_pair ? " · player pair" : ""}${m.banker_pair ? " · banker pair" : ""}`);
      headline.prepend(mark({ player: "P", banker: "B", tie: "T" }[m.winner]), " ");
      headline.setAttribute("data-testid", "winner");
      settled(m.game_id, headline);
      refreshBank();
      break;
    }
    case "void": {
      S.bettingOpen = false;
      const headline = el("div", "winner", `Round ${m.game_id} voided (${m.reason}): every stake refunded`);
      headline.setAttribute("data-testid", "winner");
      settled(m.game_id, headline);
      break;
    }
    case "table_suspended":
      S.suspended = true;
      notice(m.message || "A problem at the table is under investigation.", "suspended");
      break;
    case "table_resumed":
      S.suspended = false;
      notice({ continued: "The problem is resolved: the round continues.", corrected: "The problem is resolved: a card was corrected and the round continues.",
        voided: "The round was voided: every stake is refunded." }[m.decision] || `Resumed: ${m.decision}`, "resolved");
      break;
    case "seat_taken": case "seat_changed": case "seat_left": case "round_passed": case "sat_out":
      refreshSeats();
      break;
    case "last_hand": say("Last hand of this shoe."); break;
    case "shoe_started": S.cards = []; showCards(); showRoads({ big_road: [], bead_plate: "" }); break;
    case "table_closed": notice(m.message || "The table is closed.", "suspended"); break;
    case "table_opened": notice(""); break;
    default: break;
  }
  tick();
}

function follow() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${scheme}://${location.host}/ws/tables/${encodeURIComponent(TABLE)}?after=${S.seq}`);
  socket.addEventListener("message", (event) => onMessage(JSON.parse(event.data)));
  socket.addEventListener("close", () => setTimeout(follow, 1500)); // reconnect from the last seq: nothing is missed
}

// ---- wiring --------------------------------------------------------------------------------------------------------

function showChips() {
  $("chips").replaceChildren(...S.me.chips.map((value) => {
    const chip = el("button", "chip", money(value).replace(/\.00$/, ""));
    chip.dataset.value = String(value);
    chip.setAttribute("data-testid", `chip-${value / 100}`);
    chip.setAttribute("role", "radio");
    chip.setAttribute("aria-checked", String(value === S.chip));
    chip.addEventListener("click", () => {
      S.chip = value;
      document.querySelectorAll(".chip").forEach((c) => c.setAttribute("aria-checked", String(Number(c.dataset.value) === S.chip)));
    });
    return chip;
  }));
}

function keys(event) {
  if (event.target.closest("input, textarea")) return;
  const map = { 1: "player", 2: "banker", 3: "tie" };
  const open = S.bettingOpen && !S.suspended && S.deadline > Date.now();
  let handled = true;
  if (map[event.key]) { if (open) stage(map[event.key], S.chip); }
  else if (event.key === "ArrowUp") { if (open) stage(S.selected, event.shiftKey ? 1000 : 100); }
  else if (event.key === "ArrowDown") { if (open) stage(S.selected, event.shiftKey ? -1000 : -100); }
  else if (event.key === "Delete" || event.key === ".") { delete S.staged[S.selected]; showSpots(); }
  else if (event.key === "Enter") { if (open) deal(); }
  else if (event.key === "0") { if (open) betAction("repeat"); }
  else handled = false;
  if (handled) event.preventDefault();
}

async function start() {
  if (!PLAYER) {
    const { players } = await api("GET", "/api/players");
    const box = $("player-choice");
    box.hidden = false;
    box.append("Play as: ", ...players.map((p) => { const a = el("a", "", p.nickname); a.href = `?player=${p.id}&table=${TABLE}`; return a; }));
    return;
  }
  $("table-name").textContent = `table ${TABLE}`;
  await refreshMe();
  showChips();
  // The table as it is now, then the feed from its seq on: nothing is missed in between.
  const pub = await api("GET", `/api/tables/${TABLE}/public`);
  S.seq = pub.seq;
  S.suspended = pub.suspended;
  if (pub.suspended) notice(pub.message, "suspended");
  if (pub.round) {
    $("game-id").textContent = pub.round.game_id;
    $("round-number").textContent = `round ${pub.round.number}`;
    S.round = { number: pub.round.number, game_id: pub.round.game_id };
    S.cards = pub.round.cards;
    showCards();
    if (pub.phase === "betting_open" && pub.seconds_left > 0) {
      S.bettingOpen = true; S.deadline = Date.now() + pub.seconds_left * 1000;
      S.warning = Math.min(5, (Date.parse(pub.round.closes_at) - Date.parse(pub.round.opened_at)) / 3000);
    }
  }
  else if (pub.last_result) {
    const last = pub.last_result;
    $("game-id").textContent = last.game_id;
    S.cards = [...last.player.map((card) => ({ side: "player", card })), ...last.banker.map((card) => ({ side: "banker", card }))];
    showCards();
  }
  showRoads(pub.roads);
  document.querySelectorAll(".spot").forEach((spot) => spot.addEventListener("click", () => stage(spot.dataset.spot, S.chip)));
  document.querySelectorAll(".spot").forEach((spot) => spot.addEventListener("contextmenu", (e) => {
    e.preventDefault(); delete S.staged[spot.dataset.spot]; showSpots(); // seed 004: the right button removes the stake
  }));
  $("deal").addEventListener("click", deal);
  for (const action of ["undo", "double", "repeat"]) $(action).addEventListener("click", () => betAction(action));
  $("pass").addEventListener("click", () => seatAction("pass"));
  $("seat-take").addEventListener("click", () => seatAction("take"));
  $("seat-leave").addEventListener("click", () => seatAction("leave"));
  $("bank-take").addEventListener("click", () => bankAction("take"));
  $("bank-approve").addEventListener("click", () => bankAction("approve"));
  $("bank-leave").addEventListener("click", () => bankAction("leave"));
  $("chat-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const input = $("chat-input");
    if (!input.value.trim()) return;
    try { await api("POST", `/api/tables/${TABLE}/chat`, { player: PLAYER, text: input.value }); input.value = ""; }
    catch (error) { say(`Chat refused: ${error.message}`, "refused"); }
    pollChat();
  });
  document.addEventListener("keydown", keys);
  await Promise.all([refreshSeats(), refreshBank(), pollChat()]);
  follow();
  setInterval(tick, 250);
  setInterval(pollChat, 2000);
  setInterval(refreshBank, 3000);
}

start().catch((error) => notice(`The page could not start: ${error.message}`, "suspended"));
