// The access log on the surveillance page (admin and surveillance only; a pit boss never sees it): who signed in,
// failed, was locked out, signed out, exported what, changed which account; its hash chain checked on demand, and
// the whole log exported as JSON or CSV (each export is itself logged). Read-only: the API offers no change to it.
//
// Self-contained: the page loads this module beside its own and this adds one panel; nothing else on it depends on it.

import { api, byTestId, el, formatTime, setText } from "/static/common.js";

const PAGE = 50;
const AUDITORS = ["surveillance", "admin"];

// Each "key: value" stays on one line; a long entry breaks between them, never inside a word.
function detailOf(record) {
  const skip = new Set(["seq", "at", "actor", "kind", "address", "hash"]);
  const parts = Object.entries(record)
    .filter(([key]) => !skip.has(key))
    .map(([key, value]) => el("span", { class: "nowrap" },
      `${key}: ${typeof value === "object" ? JSON.stringify(value) : value}`));
  return parts.flatMap((part, index) => (index ? [" · ", part] : [part]));
}

function row(record) {
  return el("tr", { testid: "access-row", dataset: { kind: record.kind, seq: String(record.seq) } },
    el("td", { class: "mono" }, String(record.seq)),
    el("td", { class: "mono nowrap" }, formatTime(record.at)),
    el("td", { class: "nowrap" }, record.kind),
    el("td", { class: "nowrap" }, record.actor),
    el("td", { class: "mono" }, record.address || ""),
    el("td", {}, ...detailOf(record)));
}

// A wide log scrolls sideways inside its panel (styled through the style object: no inline style attribute).
function scrolling(table) {
  const box = el("div", { testid: "access-scroll" }, table);
  box.style.overflowX = "auto";
  return box;
}

function panel() {
  return el("section", { class: "panel", testid: "access-log-panel" },
    el("h2", {}, "Access log ", el("span", { class: "muted", testid: "access-count" })),
    el("div", { class: "actions-row" },
      el("button", { type: "button", class: "small", testid: "access-refresh" }, "Refresh"),
      el("button", { type: "button", class: "small", testid: "access-verify" }, "Verify chain"),
      el("a", { href: "/api/access-log/export?format=json", download: "access-log.json", testid: "access-export-json" },
        "Export JSON"),
      el("a", { href: "/api/access-log/export?format=csv", download: "access-log.csv", testid: "access-export-csv" },
        "Export CSV"),
      el("span", { testid: "access-verdict" })),
    scrolling(el("table", { class: "data", testid: "access-log" },
      el("thead", {}, el("tr", {}, ...["seq", "time (UTC)", "event", "who", "from", "details"].map((h) => el("th", {}, h)))),
      el("tbody", { testid: "access-body" }))),
    el("button", { type: "button", class: "small", testid: "access-older", hidden: true }, "Older"));
}

async function start() {
  let me;
  try {
    me = await api("GET", "/api/me");
  } catch {
    return; // the page's own module handles signing in and outages
  }
  if (!me || !AUDITORS.includes(me.role)) return;
  const section = panel();
  (document.querySelector(".sv-left") || document.querySelector("main") || document.body).append(section);
  const body = byTestId("access-body");
  const older = byTestId("access-older");
  let oldest = null; // the lowest seq shown

  const load = async (before) => {
    const head = (await api("GET", "/api/access-log?limit=1")).head;
    const end = before === null ? head : before - 1;
    const after = Math.max(0, end - PAGE);
    const page = await api("GET", `/api/access-log?after=${after}&limit=${end - after || 1}`);
    const records = page.records.filter((record) => record.seq <= end).reverse(); // newest first
    if (before === null) body.replaceChildren(...records.map(row));
    else body.append(...records.map(row));
    oldest = records.length ? records[records.length - 1].seq : oldest;
    older.hidden = !oldest || oldest <= 1;
    setText(byTestId("access-count"), `${head} records`);
  };
  const verify = async () => {
    const verdict = await api("GET", "/api/access-log/verify");
    const node = byTestId("access-verdict");
    setText(node, verdict.ok ? `hash chain intact: ${verdict.records} records`
      : `TAMPERED at seq ${verdict.first_bad_seq}: ${verdict.reason}`);
    node.className = verdict.ok ? "ok" : "bad";
  };
  const report = (error) => setText(byTestId("access-verdict"), error.message);
  byTestId("access-refresh").addEventListener("click", () => load(null).catch(report));
  byTestId("access-verify").addEventListener("click", () => verify().catch(report));
  older.addEventListener("click", () => load(oldest).catch(report));
  await load(null);
}

start().catch(() => {});
