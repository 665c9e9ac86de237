// The read-only table display: the current shoe's roads (bead plate, big road with its dragon tail, the three
// derived roads, the ask road) and the last result, live over the table's WebSocket. Shows nothing it was not sent.
import { byTestId, el, renderWho, requireSignIn, setText, watchTable } from "/static/common.js";

const WINNERS = { B: "banker", P: "player", T: "tie" };

// Place marks on a 6-row grid: `cells` are [column, row] pairs from the server, `make` draws each mark.
function grid(node, cells, make) {
  const width = cells.reduce((most, [column]) => Math.max(most, column + 1), 0);
  node.style.setProperty("--columns", String(Math.max(width, 12)));
  node.replaceChildren(...cells.map(([column, row], index) => {
    const mark = make(index);
    mark.style.gridColumn = String(column + 1);
    mark.style.gridRow = String(row + 1);
    return mark;
  }));
}

function render(view) {
  document.body.classList.remove("stale");
  setText(byTestId("table-title"), `Table ${view.table} · shoe ${view.shoe}`);
  const roads = view.roads;
  const counts = roads.counts;
  setText(byTestId("counts"), `Banker ${counts.banker} · Player ${counts.player} · Tie ${counts.tie} · ` +
    `pairs ${counts.player_pair}/${counts.banker_pair} · naturals ${counts.natural}`);
  const last = view.last_result;
  setText(byTestId("last-result-text"),
    last ? `${last.winner.toUpperCase()}${last.winner === "tie" ? "" : " WINS"} · Player ${last.player_total}, Banker ${last.banker_total}` : "—");
  grid(byTestId("bead-plate"), roads.bead_plate_grid, (i) =>
    el("span", { class: `bead ${roads.bead_plate[i]}`, testid: "bead" }, roads.bead_plate[i]));
  const cells = roads.big_road.flat();
  grid(byTestId("big-road"), roads.big_road_grid.flat(), (i) =>
    el("span", { class: `ring ${cells[i].winner}`, testid: "big-road-cell", title: WINNERS[cells[i].winner] },
      cells[i].ties ? String(cells[i].ties) : ""));
  for (const [name, testid] of [["big_eye_boy", "big-eye-boy"], ["small_road", "small-road"], ["cockroach_pig", "cockroach-pig"]]) {
    grid(byTestId(testid), roads.derived_grids[name], (i) =>
      el("span", { class: `dot-mark ${roads[name][i]}`, testid: `${testid}-mark` }));
  }
  const ask = roads.ask;
  byTestId("ask").replaceChildren(...["banker", "player"].map((side) =>
    el("div", { testid: `ask-${side}` }, `If ${side}: `,
      ...["big_eye_boy", "small_road", "cockroach_pig"].map((name) =>
        el("span", { class: `dot-mark ${ask[side]?.[name] || "none"}`, title: name })))));
}

async function start() {
  const me = await requireSignIn(["dealer", "pit_boss", "surveillance", "admin"]);
  if (!me) return;
  renderWho(me);
  const table = new URLSearchParams(location.search).get("table") || "T1";
  watchTable(table, render, (status) => {
    const badge = byTestId("connection");
    badge.dataset.state = status;
    setText(badge, status);
    if (status !== "live") document.body.classList.add("stale");
  });
}

start();
