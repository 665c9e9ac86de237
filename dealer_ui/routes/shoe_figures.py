"""The live shoe figures of a table (`dealer_ui/shoe_figures.py`): every bet's exact value for the cards left in the
shoe, its history through the shoe, and the alerts, for the studio's staff."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Depends, Request

from dealer_ui.auth import require
from dealer_ui.routes.lookup import runtime_of
from dealer_ui.shoe_figures import ShoeFigures
from studio.domain.roles import Role
from studio.users import Principal

router = APIRouter(tags=["tables"])
staff = require(Role.DEALER, Role.PIT_BOSS, Role.SURVEILLANCE)


@router.get("/api/tables/{table_id}/shoe-figures")
async def shoe_figures(table_id: str, request: Request, _: Principal = Depends(staff)) -> dict[str, Any]:
    """For the cards left in the table's shoe (every card burned or dealt since the cut card, corrections included):
    the same numbers as `studio odds --removed FILE --json` for the cards listed in `removed` (the table's decks and
    pay table), `cards_out`, and the seq of the record after which the shoe was so; `history`, each bet's house edge
    after every card of the shoe so far; `alerts`, each time a bet's edge for the players went beyond
    `edge_alert_threshold` (percent of the stake, `[table] edge_alert_threshold`), and `alerting`, the bets beyond it
    now. `up_to_date` is false when the figures could not catch up with the table's log within 2 s; `shoe` is null
    before the first cut card."""
    runtime = runtime_of(request, table_id)
    figures: ShoeFigures = request.app.state.shoe_figures
    up_to_date = await asyncio.to_thread(figures.wait_for, table_id, runtime.service.seq)
    answer = figures.figures(table_id)
    if answer is None:
        return {"table": table_id, "shoe": None, "up_to_date": up_to_date, "alerts": [], "alerting": [],
                "history": [], "message": "no shoe has been cut at this table yet"}  # fmt: skip
    return {**answer, "up_to_date": up_to_date}
