// The sign-in page: signs a person in, says when the studio is in demo mode, and links to the views their role uses.
import { api, byTestId, el, hideBanner, renderWho, roleName, showBanner, whoAmI } from "/static/common.js";

// The demo accounts come from the public GET /api/studio, and only when the studio runs in demo mode.
let demoAccounts = [];

const VIEWS = {
  console: { label: "Dealer console", roles: ["dealer", "pit_boss", "admin"] },
  pitboss: { label: "Pit boss", roles: ["pit_boss", "admin"] },
  surveillance: { label: "Surveillance", roles: ["surveillance", "pit_boss", "admin"] },
};

function nextPage() {
  const next = new URLSearchParams(location.search).get("next");
  // Only a page of this studio: a path on this origin, never another site.
  return next && next.startsWith("/") && !next.startsWith("//") ? next : null;
}

function showDemo(demo) {
  const box = byTestId("demo-banner");
  box.hidden = !demo;
  if (!demo) return;
  const rows = demoAccounts.map(({ name, password, role }) =>
    el("tr", { testid: "demo-account" }, el("td", {}, roleName(role)), el("td", { class: "mono" }, `${name} / ${password}`)));
  byTestId("demo-accounts").replaceChildren(el("tr", {}, el("th", {}, "role"), el("th", {}, "name / password")), ...rows);
}

async function showSignedIn(me) {
  renderWho(me);
  showDemo(me.demo);
  byTestId("signin-panel").hidden = true;
  byTestId("signed-in-panel").hidden = false;
  byTestId("signed-in-as").textContent = `${me.name}, ${roleName(me.role)}`;
  const links = [];
  let tables = [];
  if (VIEWS.console.roles.includes(me.role)) {
    try {
      tables = (await api("GET", "/api/tables")).map((view) => view.table);
    } catch (error) {
      showBanner(error.message);
    }
    for (const table of tables) {
      links.push(el("a", { class: "button", testid: `link-console-${table}`,
        href: `/static/console.html?table=${encodeURIComponent(table)}` }, `${VIEWS.console.label} ${table}`));
    }
  }
  for (const table of tables) {
    links.push(el("a", { class: "button", testid: `link-display-${table}`,
      href: `/static/display.html?table=${encodeURIComponent(table)}` }, `Table display ${table}`));
  }
  for (const page of ["pitboss", "surveillance"]) {
    if (VIEWS[page].roles.includes(me.role)) {
      links.push(el("a", { class: "button", testid: `link-${page}`, href: `/static/${page}.html` }, VIEWS[page].label));
    }
  }
  if (!links.length) links.push(el("p", { class: "muted" }, "This role has no page here."));
  byTestId("role-links").replaceChildren(...links);
}

// Where a person goes right after signing in: the view their job is done from (a dealer's console when the studio
// has one table; otherwise the list of views, to choose one).
async function landingPage(me) {
  if (me.role === "pit_boss") return "/static/pitboss.html";
  if (me.role === "surveillance") return "/static/surveillance.html";
  if (me.role !== "dealer") return null;
  const tables = (await api("GET", "/api/tables")).map((view) => view.table);
  return tables.length === 1 ? `/static/console.html?table=${encodeURIComponent(tables[0])}` : null;
}

async function start() {
  byTestId("login-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    hideBanner();
    const button = byTestId("login-submit");
    button.disabled = true;
    try {
      const name = byTestId("login-name").value.trim();
      await api("POST", "/api/login", { name, password: byTestId("login-password").value });
      const me = await whoAmI();
      const next = nextPage() || await landingPage(me);
      if (next) {
        location.href = next;
        return;
      }
      await showSignedIn(me);
    } catch (error) {
      showBanner(error.status === 401 ? "Wrong name or password." : error.message);
      byTestId("login-password").value = "";
    } finally {
      button.disabled = false;
    }
  });
  try {
    const studio = await api("GET", "/api/studio");
    demoAccounts = studio.demo_accounts;
    showDemo(studio.demo);
  } catch (error) {
    showBanner(error.message);
  }
  let me = null;
  try {
    me = await whoAmI();
  } catch (error) {
    showBanner(error.message);
  }
  if (me) {
    await showSignedIn(me);
  } else {
    byTestId("signin-panel").hidden = false;
  }
}

start();
