"""What the dealer console shows: the next required action, in words, from the table's state; the actions the
procedure allows now; and what the console remembers from the log (the last burn, the last suspension and the pit
boss's decision on it).

Pure: functions of the state, the time and the log's records. The console always says what to do next; when the
table is suspended it says to call the pit boss, and why.

Rules held here:
- A dealer's action is offered only when the procedure's table (`TRANSITIONS`) holds its command in the phase, and
  only when it would not break the procedure: a card (drawn or keyed in) only when one is due, since a card when none
  is due suspends the table; "no more bets" only once the timer is over where the table allows no early close; the
  shuffle only once no deck inspection is due; "cut card out" only while the last hand is not known yet.
- The last burn is shown, with its cards, while it runs and after it, until the next card is dealt; the last
  suspension, with the read that caused it and then the pit boss's decision, until a round other than the one it
  interrupted opens.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from studio.domain import commands as c
from studio.domain.errors import ProcedureError
from studio.domain.events import BurnReason, InspectionStage
from studio.domain.procedure import (
    TRANSITIONS,
    Phase,
    TableState,
    decide,
    expected_commands,
    inspection_due,
    is_last_hand,
)
from studio.domain.records import Record
from studio.domain.refusals import GENERIC_REASON, sentence, situation
from studio.domain.roles import Actor, Role
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


# The dealer's actions (the console's buttons, by their `data-action`) and the command each sends.
DEALER_COMMANDS: dict[str, type[c.Command]] = {
    "shuffle": c.ConfirmShuffle,
    "cut": c.PlaceCutCard,
    "open_betting": c.OpenBetting,
    "close_betting": c.CloseBetting,
    "draw": c.DrawCard,  # the simulated shoe slides a card out
    "dealer_change": c.ChangeDealer,
    "cut_card_out": c.ReportCutCard,
    "key_card": c.DrawCard,  # a card keyed in by hand
    "declare_error": c.DeclareError,
}


_DEALER_COMMAND_NAMES = frozenset(command.__name__ for command in DEALER_COMMANDS.values())


def card_due(state: TableState) -> bool:
    """Whether the procedure waits for a card now: one to burn, or one to deal."""
    if state.phase is Phase.BURNING:
        return True
    return state.phase is Phase.DEALING and state.round is not None and state.round.next_side is not None


_CONSOLE = Actor(Role.DEALER, "console")  # who the handlers' own checks are asked for (none depends on the name)
_PROBED: dict[type[c.Command], c.Command] = {  # commands whose handlers refuse by the table's state and the time
    c.ConfirmShuffle: c.ConfirmShuffle(_CONSOLE),
    c.PlaceCutCard: c.PlaceCutCard(_CONSOLE),
    c.OpenBetting: c.OpenBetting(_CONSOLE),
    c.CloseBetting: c.CloseBetting(_CONSOLE),
}


def _refusal(state: TableState, command: type[c.Command], now: datetime) -> str | None:
    phase = state.phase.value
    if command not in TRANSITIONS[state.phase]:
        # What the dealer can do instead (the pit boss's moves are theirs to know).
        instead = tuple(name for name in expected_commands(state.phase) if name in _DEALER_COMMAND_NAMES)
        return sentence(ProcedureError(phase, command.__name__, GENERIC_REASON, instead))
    if command is c.DrawCard and not card_due(state):
        return sentence(ProcedureError(phase, command.__name__, f"no card is due while {situation(phase)}"))
    if command is c.ReportCutCard and state.last_round is not None:
        return f"The cut card is out already: round {state.last_round} is the last hand."
    probe = _PROBED.get(command)
    if probe is not None:
        try:
            decide(state, probe, now)
        except ProcedureError as error:
            return sentence(error)
    return None


def dealer_actions(state: TableState, now: datetime) -> dict[str, str | None]:
    """Each of the dealer's actions, in the console's order: None where the procedure allows it now, else why not,
    as a sentence (see the rules at the top)."""
    return {action: _refusal(state, command, now) for action, command in DEALER_COMMANDS.items()}


# What the console remembers from the log ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BurnShown:
    reason: str  # the burn's first reason (an error during a burn adds its cards to it)
    count: int  # cards to burn in all
    cards: tuple[str, ...] = ()  # the cards burned so far, in order
    done: bool = False
    approved_by: str | None = None


@dataclass(frozen=True, slots=True)
class SuspensionShown:
    reason: str  # a `SuspensionReason` value
    detail: str
    game_id: str | None  # the round it interrupted, if any
    read: Mapping[str, Any] | None  # the read that caused it: card (None: unreadable), source, device_seq, confidence
    corrections: tuple[Mapping[str, Any], ...] = ()  # position, original, corrected, reason, by
    decision: str | None = None  # a `Resumption` value, once the pit boss has decided
    by: str | None = None  # the pit boss who decided
    decision_reason: str = ""  # their reason (the void's reason)


@dataclass(frozen=True, slots=True)
class ConsoleMemory:
    burn: BurnShown | None = None
    suspension: SuspensionShown | None = None


_READ_FIELDS = ("card", "source", "device_seq", "confidence")


def remember(memory: ConsoleMemory, record: Record) -> ConsoleMemory:
    """`memory` after one more record of the table's log."""
    data, burn, suspension = record.data, memory.burn, memory.suspension
    match record.kind:
        case "BurnRequired" if burn is not None and not burn.done:
            return replace(memory, burn=replace(burn, count=burn.count + data["count"]))
        case "BurnRequired":
            return replace(memory, burn=BurnShown(data["reason"], data["count"], approved_by=data.get("approved_by")))
        case "CardBurned" if burn is not None:
            return replace(memory, burn=replace(burn, cards=(*burn.cards, data["card"])))
        case "BurnCompleted" if burn is not None:
            return replace(memory, burn=replace(burn, done=True))
        case "CardDealt" | "CutCardPlaced":
            return replace(memory, burn=None)
        case "TableSuspended":
            read = {name: data.get(name) for name in _READ_FIELDS} if data.get("source") is not None else None
            shown = SuspensionShown(data["reason"], data["detail"], data.get("game_id"), read)
            return replace(memory, suspension=shown)
        case "CardCorrected" if suspension is not None:
            fix = {name: data.get(name) for name in ("position", "original", "corrected", "reason", "by")}
            return replace(memory, suspension=replace(suspension, corrections=(*suspension.corrections, fix)))
        case "PlayContinued" | "RoundVoided" if suspension is not None:
            return replace(memory, suspension=replace(suspension, by=data["by"], decision_reason=data["reason"]))
        case "TableResumed" if suspension is not None:
            return replace(memory, suspension=replace(suspension, decision=data["decision"]))
        case "BettingOpened" if suspension is not None and suspension.decision is not None:
            return replace(memory, suspension=None) if data["game_id"] != suspension.game_id else memory
    return memory
