// Shared by every page: the API client, the error banner, safe DOM building and the live table feed.
//
// Rule held here: text from the server is only ever inserted with textContent (the `el` helper); no page builds
// markup from data with innerHTML.

export class ApiError extends Error {
  constructor(status, message, detail) {
    super(message);
    this.status = status;
    this.detail = detail;
  }
}

// The message a person reads for any error body the server sends: {detail: "..."}, the 409 shape
// {detail: {phase, command, reason, expected, message}} (`message` is the sentence), or a validation list [{loc, msg}].
export function errorMessage(status, body) {
  const detail = body && typeof body === "object" ? body.detail : body;
  if (typeof detail === "string" && detail) return detail;
  if (Array.isArray(detail)) {
    return detail.map((item) => `${(item.loc || []).filter((part) => part !== "body").join(".")}: ${item.msg}`)
      .join("; ");
  }
  if (detail && typeof detail === "object") {
    if (detail.message) return detail.message; // the refusal as a sentence (studio/domain/refusals.py)
    if (detail.reason) {
      const expected = Array.isArray(detail.expected) && detail.expected.length
        ? ` (allowed now: ${detail.expected.join(", ")})` : "";
      return `${detail.command || "action"} refused in phase ${detail.phase || "?"}: ${detail.reason}${expected}`;
    }
  }
  return `request failed (HTTP ${status})`;
}

export async function api(method, path, body) {
  const options = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, options);
  } catch (error) {
    throw new ApiError(0, `the studio server cannot be reached (${error.message})`, null);
  }
  let data = null;
  const text = await response.text();
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (!response.ok) {
    throw new ApiError(response.status, errorMessage(response.status, data), data && data.detail);
  }
  return data;
}

// Build an element: el("div", {class: "x", dataset: {testid: "y"}, onclick: fn}, "text", child, ...).
// Strings become text nodes, so nothing from the server is ever parsed as markup.
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key === "testid") node.dataset.testid = value;
    else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function setText(node, value) {
  node.textContent = value === undefined || value === null ? "" : String(value);
}

export function byTestId(id) {
  return document.querySelector(`[data-testid="${id}"]`);
}

// The banner at the top of each page: errors (409 reasons and the like) stay until closed or replaced.
export function showBanner(message, kind = "error") {
  const banner = byTestId("banner");
  if (!banner) return;
  banner.replaceChildren(
    el("span", { testid: "banner-text" }, message),
    el("button", { type: "button", class: "banner-close", "aria-label": "close", onclick: hideBanner }, "×"),
  );
  banner.className = `banner ${kind}`;
  banner.hidden = false;
}

export function hideBanner() {
  const banner = byTestId("banner");
  if (banner) {
    banner.hidden = true;
    banner.replaceChildren();
  }
}

// Who is signed in, or null; a page that needs a sign-in sends the person to the sign-in page and back.
export async function whoAmI() {
  try {
    return await api("GET", "/api/me");
  } catch (error) {
    if (error.status === 401) return null;
    throw error;
  }
}

export function goSignIn() {
  const next = location.pathname + location.search;
  location.href = `/static/index.html?next=${encodeURIComponent(next)}`;
}

// While the studio cannot read its accounts (a database outage: 503) the person stays signed in: the page says so
// and asks again every few seconds, instead of sending them to a sign-in page that cannot sign anyone in.
export const OUTAGE_RETRY_MS = 5000;

export async function requireSignIn(roles) {
  let me;
  for (let waited = false; ; waited = true) {
    try {
      me = await whoAmI();
      if (waited) hideBanner();
      break;
    } catch (error) {
      if (error.status !== 503) throw error;
      showBanner(`${error.message} — you are still signed in; trying again every ${OUTAGE_RETRY_MS / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, OUTAGE_RETRY_MS));
    }
  }
  if (me === null) {
    goSignIn();
    return null;
  }
  if (roles && !roles.includes(me.role) && me.role !== "admin") {
    showBanner(`${me.name} is signed in as ${roleName(me.role)}: this page needs ${roles.map(roleName).join(" or ")}`);
  }
  return me;
}

export async function signOut() {
  try {
    await api("POST", "/api/logout");
  } finally {
    location.href = "/static/index.html";
  }
}

const ROLE_NAMES = { dealer: "dealer", pit_boss: "pit boss", surveillance: "surveillance", admin: "admin" };

export function roleName(role) {
  return ROLE_NAMES[role] || role;
}

// The header's "who" box: name, role, demo mode, sign out.
export function renderWho(me) {
  const who = byTestId("who");
  if (!who || !me) return;
  who.replaceChildren(
    me.demo ? el("span", { class: "demo-tag", testid: "demo-tag" }, "DEMO MODE") : "",
    el("span", { testid: "who-name" }, `${me.name} (${roleName(me.role)})`),
    el("button", { type: "button", class: "small", testid: "sign-out", onclick: signOut }, "Sign out"),
  );
}

// Card codes: "QH" → {rank: "Q", suit: "H"}; red suits are hearts and diamonds.
const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };

export function cardElement(code, extra = {}) {
  const text = String(code || "?");
  const suit = text.slice(-1).toUpperCase();
  const rank = text.slice(0, -1);
  const red = suit === "H" || suit === "D";
  return el(
    "span",
    { class: `card${red ? " red" : ""}`, testid: "card", dataset: { code: text }, title: text, ...extra },
    el("span", { class: "rank" }, rank || text),
    el("span", { class: "suit" }, SUITS[suit] || suit),
  );
}

// The live state of one table over /ws/tables/{id}: the whole view on connect and after every change. Reconnects
// with capped exponential backoff; `onStatus` hears "connecting", "live", "reconnecting" (with the delay) and "closed"
// (with the server's reason, for sign-in and permission problems that retrying cannot fix).
export function watchTable(tableId, onView, onStatus) {
  let socket = null;
  let delay = 500;
  let timer = null;
  let stopped = false;

  const connect = () => {
    if (stopped) return;
    onStatus("connecting");
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    socket = new WebSocket(`${scheme}//${location.host}/ws/tables/${encodeURIComponent(tableId)}`);
    socket.addEventListener("message", (message) => {
      let view;
      try {
        view = JSON.parse(message.data);
      } catch {
        return;
      }
      delay = 500;
      onStatus("live");
      onView(view);
    });
    socket.addEventListener("close", (event) => {
      socket = null;
      if (stopped) return;
      if (event.code === 4401 || event.code === 4403 || event.code === 4404) {
        onStatus("closed", event.reason || `closed (${event.code})`, event.code);
        return;
      }
      onStatus("reconnecting", delay);
      timer = setTimeout(connect, delay);
      delay = Math.min(delay * 2, 10000);
    });
  };
  connect();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      if (socket) socket.close();
    },
  };
}

// Phase names for people.
const PHASES = {
  awaiting_shuffle: "awaiting shuffle",
  awaiting_cut: "awaiting cut card",
  burning: "burning",
  ready: "ready",
  betting_open: "betting open",
  dealing: "dealing",
  suspended: "SUSPENDED",
  closed: "closed",
};

export function phaseName(phase) {
  return PHASES[phase] || phase;
}

export function formatTime(iso) {
  if (!iso) return "";
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return String(iso);
  return at.toISOString().replace("T", " ").replace("Z", " UTC");
}
