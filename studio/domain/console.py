"""What the dealer console shows: the next required action, in words, from the table's state.

Pure: a function of the state and the time. The console always says what to do next; when the table is suspended it
says to call the pit boss, and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from studio.domain.events import BurnReason, InspectionStage
from studio.domain.procedure import Phase, TableState, inspection_due, is_last_hand
from studio.domain.rules import hand_total


@dataclass(frozen=True, slots=True)
class NextAction:
    action: str  # a stable key for the console: "shuffle", "cut", "burn", "open_betting", ...
    text: str  # what the dealer reads, in large type
    detail: str = ""


_BURN_REASONS = {
    BurnReason.SHUFFLE: "after the shuffle",
    BurnReason.ERROR: "after the error",
    BurnReason.DEALER_CHANGE: "for the new dealer",
}


def betting_light(state: TableState, now: datetime) -> tuple[str, float]:
    """The betting light (green, yellow, red) and the seconds left; red with 0 when betting is not open."""
    if state.phase is not Phase.BETTING_OPEN or state.round is None:
        return "red", 0.0
    left = max(0.0, (state.round.closes_at - now).total_seconds())
    if left <= 0:
        return "red", 0.0
    return ("yellow" if left <= state.config.warning_seconds else "green"), left


def next_action(state: TableState, now: datetime) -> NextAction:
    last = " — last hand of the shoe" if state.round is not None and is_last_hand(state, state.round.number) else ""
    match state.phase:
        case Phase.AWAITING_SHUFFLE:
            due = inspection_due(state)
            if due is not None:
                stage, shoe = due
                which = f"shoe {shoe} has ended" if stage is InspectionStage.END else f"for shoe {shoe}"
                how = "face up and face down with the pit boss, who approves (or replaces a deck)"
                decks = f"spread all {state.config.decks} decks"
                return NextAction("inspect", "Inspect the decks", f"{which}: {decks} {how}")
            return NextAction("shuffle", "Shuffle the shoe", f"{state.config.decks} decks, inspected; then confirm")
        case Phase.AWAITING_CUT:
            return NextAction("cut", "Place the cut card", f"{state.config.cut_card_from_back} cards from the back")
        case Phase.BURNING:
            assert state.burn is not None
            return NextAction("burn", f"Burn {state.burn.remaining} card{'s' if state.burn.remaining != 1 else ''}",
                              _BURN_REASONS[state.burn.reason])  # fmt: skip
        case Phase.READY:
            coming = " — the next round is the last hand" if state.last_round is not None else ""
            return NextAction("open_betting", "Open betting", f"round {state.rounds_started + 1}{coming}")
        case Phase.BETTING_OPEN:
            light, left = betting_light(state, now)
            if light == "red":
                return NextAction("close_betting", "No more bets", "the betting time is over" + last)
            return NextAction("wait_for_bets", f"Bets open: {left:.0f} s", "wait for the timer" + last)
        case Phase.DEALING:
            assert state.round is not None
            side = state.round.next_side
            player, banker = state.round.player, state.round.banker
            totals = f"Player {hand_total(player)} · Banker {hand_total(banker)}" if player else ""
            target = side.value.capitalize() if side is not None else "nobody"
            return NextAction("deal", f"Deal to {target}", (totals + last).strip(" —"))
        case Phase.CLOSED:
            return NextAction("closed", "Table closed", "a pit boss opens it again")
        case Phase.SUSPENDED:
            assert state.suspension is not None
            return NextAction("call_pit_boss", "Call the pit boss", state.suspension.detail)
    return NextAction("wait", "Wait")
