// Live shoe figures (GET /api/tables/{table}/shoe-figures), shared by the pit boss and surveillance pages: every bet's
// exact house edge for the cards left in the shoe, a plot of each bet's edge through the shoe so far (inline SVG, one
// line per bet), and the alert when a bet favours the players beyond the table's threshold.
//
// `figuresPanel(table)` returns {root, follow(view)}: `follow` is given each live view of the table and fetches the
// figures again when the table's log has moved on (one request at a time; the latest seq wins).
import { api, el, formatTime, goSignIn } from "/static/common.js";

export const BETS = [
  ["banker", "Banker", "#e0383e"],
  ["player", "Player", "#2f7de1"],
  ["tie", "Tie", "#2faa5a"],
  ["player_pair", "Player Pair", "#8cc4ff"],
  ["banker_pair", "Banker Pair", "#ff9a9e"],
  ["either_pair", "Either Pair", "#c792ea"],
  ["perfect_pair", "Perfect Pair", "#f2c230"],
  ["player_bonus", "Player Bonus", "#4dd0e1"],
  ["banker_bonus", "Banker Bonus", "#ff8a3d"],
];
const NAME = Object.fromEntries(BETS.map(([bet, name]) => [bet, name]));
const SVG = "http://www.w3.org/2000/svg";

export function percent(value, digits = 3) {
  return `${(value * 100).toFixed(digits)}%`;
}

function signed(value) {
  return `${value > 0 ? "+" : ""}${value.toFixed(3)}`;
}

function svg(tag, attributes = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  for (const child of children) node.append(child);
  return node;
}

// Each bet's house edge (%) against the cards out, one polyline per bet; the zero line (below it a bet favours the
// players) and the alert threshold line.
function plot(figures) {
  const width = 600;
  const height = 170;
  const pad = { left: 34, right: 8, top: 8, bottom: 18 };
  const history = figures.history;
  const threshold = -Number(figures.edge_alert_threshold); // as a house edge (%)
  const values = history.flatMap((point) => BETS.map(([bet]) => point.house_edge[bet] * 100));
  let low = Math.min(0, threshold, ...values);
  let high = Math.max(0, threshold, ...values);
  if (high - low < 1) high = low + 1;
  const span = high - low;
  low -= span * 0.05;
  high += span * 0.05;
  const last = Math.max(1, history[history.length - 1].cards_out);
  const x = (cards) => pad.left + (cards / last) * (width - pad.left - pad.right);
  const y = (edge) => pad.top + ((high - edge) / (high - low)) * (height - pad.top - pad.bottom);
  const graph = svg("svg", {
    viewBox: `0 0 ${width} ${height}`, class: "edge-plot", role: "img", "data-testid": "edge-plot",
    "aria-label": "each bet's house edge through the shoe so far",
  });
  const ticks = [low + (high - low) * 0.05, 0, high - (high - low) * 0.05].filter((tick, index, all) =>
    index === 1 || Math.abs(tick) > (high - low) * 0.12 || all.length < 3);
  for (const tick of ticks) {
    graph.append(svg("line", { x1: pad.left, x2: width - pad.right, y1: y(tick), y2: y(tick), class: tick === 0 ? "zero" : "grid" }),
      svg("text", { x: pad.left - 4, y: y(tick) + 4, "text-anchor": "end", class: "tick" }, `${tick.toFixed(tick === 0 ? 0 : 1)}%`));
  }
  graph.append(svg("line", { x1: pad.left, x2: width - pad.right, y1: y(threshold), y2: y(threshold), class: "threshold",
    "data-testid": "edge-plot-threshold" }));
  graph.append(svg("text", { x: pad.left, y: height - 4, class: "tick" }, "0"),
    svg("text", { x: width - pad.right, y: height - 4, "text-anchor": "end", class: "tick" }, `${last} cards out`));
  for (const [bet, name, colour] of BETS) {
    const points = history.map((point) => `${x(point.cards_out).toFixed(1)},${y(point.house_edge[bet] * 100).toFixed(1)}`);
    if (points.length === 1) points.push(points[0].replace(/^[^,]+/, x(last).toFixed(1)));
    graph.append(svg("polyline", { points: points.join(" "), stroke: colour, class: "edge-line", "data-bet": bet },
      svg("title", {}, name)));
  }
  return graph;
}

function alertView(figures) {
  if (!figures.alerting.length) return "";
  const latest = new Map(figures.alerts.map((alert) => [alert.bet, alert]));
  return el("div", { class: "edge-alert", role: "alert", testid: "edge-alert" },
    ...figures.alerting.map((bet) => {
      const alert = latest.get(bet);
      const edge = figures.bets[bet] ? -figures.bets[bet].house_edge * 100 : null;
      return el("div", { dataset: { bet } },
        el("strong", {}, `${NAME[bet] || bet}: the players' edge is ${edge === null ? "?" : signed(edge)}%`),
        `, beyond the alert threshold of ${figures.edge_alert_threshold}%`,
        alert ? ` since ${formatTime(alert.at)} (seq ${alert.seq}, ${alert.cards_remaining} cards left` +
          `${alert.game_id ? `, ${alert.game_id}` : ""}, dealer ${alert.dealer || "—"})` : "");
    }));
}

function render(figures) {
  if (figures.shoe === null) {
    return [el("p", { class: "muted", testid: "figures-empty" }, "No shoe has been cut at this table yet.")];
  }
  const rows = BETS.map(([bet, name, colour]) => {
    const value = figures.bets[bet];
    const favours = value.house_edge < 0;
    return el("tr", { testid: "figure-row", dataset: { bet, houseEdge: String(value.house_edge), rtp: String(value.rtp) },
      class: favours ? "favours-players" : "" },
    el("th", {}, swatch(colour), name),
    el("td", { class: "num", testid: "figure-edge" }, percent(value.house_edge)),
    el("td", { class: "num" }, percent(value.rtp)));
  });
  return [
    el("div", { class: "figures-head", testid: "figures-head" },
      `shoe ${figures.shoe} · ${figures.cards_out} cards out · ${figures.cards_remaining} left`,
      el("span", { class: "muted" }, ` · after seq ${figures.seq}${figures.up_to_date ? "" : " (catching up)"}`)),
    alertView(figures),
    el("div", { class: "figures-body" },
      el("table", { class: "figures", testid: "figures" },
        el("thead", {}, el("tr", {}, el("th", {}, "bet"), el("th", { class: "num" }, "house edge"), el("th", { class: "num" }, "RTP"))),
        el("tbody", {}, ...rows)),
      plot(figures)),
  ];
}

export function figuresPanel(table, onAlert) {
  const body = el("div", { class: "figures-content", testid: "figures-content" }, el("p", { class: "muted" }, "loading…"));
  const root = el("section", { class: "shoe-figures", testid: "shoe-figures", dataset: { table } },
    el("h4", {}, "Shoe figures: each bet's exact edge for the cards left"), body);
  let asked = -1; // the table seq last asked for
  let busy = false;
  let wanted = -1;
  const fetchFigures = async () => {
    if (busy || wanted === asked) return;
    busy = true;
    asked = wanted;
    try {
      const figures = await api("GET", `/api/tables/${encodeURIComponent(table)}/shoe-figures`);
      root.dataset.seq = figures.seq ?? "";
      root.dataset.cardsOut = figures.cards_out ?? "";
      root.dataset.alerting = (figures.alerting || []).join(" ");
      body.replaceChildren(...render(figures));
      if (onAlert) onAlert(figures);
    } catch (error) {
      if (error.status === 401) goSignIn();
      else body.replaceChildren(el("p", { class: "muted" }, `figures unavailable: ${error.message}`));
    } finally {
      busy = false;
      if (wanted !== asked) fetchFigures();
    }
  };
  return {
    root,
    follow(view) {
      wanted = view.seq;
      fetchFigures();
    },
  };
}

// A colour sample, set through the style object: the Content-Security-Policy refuses inline style attributes.
function swatch(colour) {
  const node = el("span", { class: "swatch" });
  node.style.background = colour;
  return node;
}
