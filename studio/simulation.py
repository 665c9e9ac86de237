"""Whole shoes dealt through the real procedure engine by a scripted dealer: for `studio simulate` and benchmarks.

The dealer confirms the shuffle, places the cut card, burns, then opens betting, waits for the timer, calls "no more
bets" and draws cards until the engine says the round is complete. The cut card "appears" when the next card to draw
is the first one behind it, exactly as a shoe would report it. Time comes from a `ManualClock`.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from studio.clock import ManualClock
from studio.domain import commands as c
from studio.domain import events as e
from studio.domain.cards import Card, shoe_composition
from studio.domain.errors import InvalidShoe
from studio.domain.procedure import Phase
from studio.domain.procedure_config import ProcedureConfig
from studio.domain.roles import Actor, Machine, Role
from studio.ports import EventStore
from studio.table_service import TableService

DEALER = Actor(Role.DEALER, "sim")
SHOE = Actor(Machine.DEVICE, "sim-shoe")
SECONDS_PER_CARD = 2


def seeded_shoe(decks: int, rng: random.Random) -> list[Card]:
    """A shuffled shoe of `decks` decks, in draw order."""
    cards = sorted(shoe_composition(decks).elements(), key=lambda card: (card.suit.value, card.rank.number))
    rng.shuffle(cards)
    return cards


class ShoeSimulation:
    """Deals shoes on one table, yielding one JSON-ready line per burn and per round (DESIGN.md §6)."""

    def __init__(self, service: TableService, clock: ManualClock) -> None:
        self.service = service
        self.clock = clock

    def deal_shoe(self, cards: Sequence[Card], cut_card: int | None = None) -> Iterator[dict[str, Any]]:
        config = self.service.state.config
        cut = len(cards) - config.cut_card_from_back if cut_card is None else cut_card
        if not 0 <= cut <= len(cards):
            raise InvalidShoe(f"the cut card must have 0 to {len(cards)} cards in front of it, not {cut}")
        self.service.handle(c.ConfirmShuffle(DEALER))
        self.service.handle(c.PlaceCutCard(DEALER, cut))
        position = 0
        burned: list[Card] = []
        shoe_round = 0
        while True:
            phase = self.service.state.phase
            if phase is Phase.AWAITING_SHUFFLE:
                return
            if phase is Phase.READY:
                self.service.handle(c.OpenBetting(DEALER))
                self.clock.advance(config.betting_seconds)
                self.service.handle(c.CloseBetting(DEALER))
                continue
            if phase not in (Phase.BURNING, Phase.DEALING):
                state = self.service.state
                detail = state.suspension.detail if state.suspension else phase.value
                raise InvalidShoe(f"card {position} of the shoe stopped the table: {detail}")
            if position >= len(cards):
                raise InvalidShoe(f"the shoe ran out after {len(cards)} cards in phase {phase.value}")
            if position == cut:
                self.service.handle(c.ReportCutCard(SHOE, "shoe"))
            self.clock.advance(SECONDS_PER_CARD)
            logged = self.service.handle(c.DrawCard(SHOE, c.CardRead(cards[position], "sim-shoe", position + 1)))
            position += 1
            for event in (entry.event for entry in logged):
                if isinstance(event, e.CardBurned):
                    burned.append(event.card)
                elif isinstance(event, e.BurnCompleted):
                    yield {"burn": [card.code for card in burned], "reason": event.reason}
                    burned = []
                elif isinstance(event, e.RoundCompleted):
                    shoe_round += 1
                    yield round_line(event, shoe_round, self.service.state.shoe)


def round_line(event: e.RoundCompleted, number: int, shoe: int) -> dict[str, Any]:
    return {
        "round": number,
        "game_id": event.game_id,
        "shoe": shoe,
        "player": [card.code for card in event.player],
        "banker": [card.code for card in event.banker],
        "player_total": event.player_total,
        "banker_total": event.banker_total,
        "winner": event.winner.value,
        "natural": event.natural,
        "player_pair": event.player_pair,
        "banker_pair": event.banker_pair,
        "last_hand": event.last_hand,
    }


def simulation(
    store: EventStore, start: datetime, config: ProcedureConfig | None = None, table_id: str = "SIM"
) -> ShoeSimulation:
    clock = ManualClock(start)
    return ShoeSimulation(TableService(table_id, store, clock, config), clock)
