"""The studio procedure (studio/procedure.py), rule by rule.

Every scenario drives the pure core (`decide`, then `evolve` for each event) and asserts, after each step, the exact
events produced and the WHOLE state: `Table.step` compares a snapshot of every field of the state with the snapshot
before the step plus exactly the changes the test names. The transition table is covered pair by pair: every
(phase, command) it holds is driven, and every pair it does not hold is refused without changing anything.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from studio.clock import ManualClock
from studio.domain import commands as c
from studio.domain import events as e
from studio.domain.cards import ALL_CARDS, Card
from studio.domain.errors import ConfigError, ProcedureError
from studio.domain.events import BurnReason, SuspensionReason
from studio.domain.procedure import (
    TRANSITIONS,
    Phase,
    Seat,
    TableState,
    burn_count,
    decide,
    evolve,
    expected_commands,
)
from studio.domain.procedure_config import ProcedureConfig
from studio.domain.rules import Side, Winner, outcome
from studio.domain.seats import bet_refusal, seat_status, seats_view
from studio.settings import procedure_from_mapping

T0 = datetime(2026, 3, 14, 15, 9, 26, tzinfo=UTC)
TABLE = "T7"
DEALER = "dealer:ann"
BOSS = "pit_boss:bob"
GAME = "game_server:operator-1"  # the actor of seat commands
SHOE = "shoe-1"  # the source named in card reads
DEVICE = "device:shoe-1"  # the actor of card reads
BURNS = "2C 3C 4C 5C 6C 7C"
SIDES = {"P": Side.PLAYER, "B": Side.BANKER}


def card(code: str) -> Card:
    return Card.parse(code)


def cards(codes: str) -> tuple[Card, ...]:
    return tuple(Card.parse(code) for code in codes.split())


# ---------------------------------------------------------------------------------------------------------------------
# Snapshots of the state, independent of how the engine stores it (dataclass or named tuple, card counts as a tuple).


def fields_of(obj: Any) -> dict[str, Any]:
    if hasattr(obj, "_asdict"):
        return dict(obj._asdict())
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}


def snapshot(state: TableState) -> dict[str, Any]:
    snap = fields_of(state)
    snap["seen"] = {x.code: state.copies_seen(x) for x in ALL_CARDS if state.copies_seen(x)}
    snap["last_device_seq"] = dict(state.last_device_seq)
    snap["device_sessions"] = dict(state.device_sessions)
    for name in ("burn", "round", "suspension", "counts"):
        if snap[name] is not None:
            snap[name] = fields_of(snap[name])
    if snap["round"] is not None:
        snap["round"].pop("next_side", None)  # derived from `dealt`; checked with `next_side()`
    return snap


def next_side(state: TableState) -> Side | None:
    assert state.round is not None
    value: Any = state.round.next_side
    side: Side | None = value() if callable(value) else value
    return side


def counts(**changes: int) -> dict[str, int]:
    return {"rounds": 0, "voids": 0, "corrections": 0, "dealt": 0, "burned": 0, "set_aside": 0, **changes}


def burn(reason: str, remaining: int, then: Phase = Phase.READY, approved_by: str | None = None) -> dict[str, Any]:
    return {"reason": reason, "remaining": remaining, "then": then, "approved_by": approved_by}


def suspension(
    reason: SuspensionReason,
    detail: str,
    resume: Phase,
    read: c.CardRead | None = None,
    corrected: Card | None = None,
    corrections: int = 0,
) -> dict[str, Any]:
    return {"reason": reason.value, "detail": detail, "resume": resume, "read": read, "corrected": corrected,
            "corrections": corrections}  # fmt: skip


def round_(
    number: int, game_id: str, opened_at: datetime, closes_at: datetime, dealt: tuple[tuple[Side, Card], ...] = ()
) -> dict[str, Any]:
    return {"number": number, "game_id": game_id, "opened_at": opened_at, "closes_at": closes_at, "dealt": dealt}


INITIAL = {
    "table_id": TABLE,
    "config": ProcedureConfig(),
    "phase": Phase.AWAITING_SHUFFLE,
    "dealer": None,
    "shoe": 0,
    "rounds_started": 0,
    "cut_position": None,
    "cards_drawn": 0,
    "seen": {},
    "last_device_seq": {},
    "device_sessions": {},
    "last_round": None,
    "burn": None,
    "round": None,
    "suspension": None,
    "counts": counts(),
    "last_result": None,
    "reopens_in": None,
    "start_inspected": 0,
    "end_inspected": 0,
    "seats": (),
}


class Table:
    """One table driven through the pure core, with a manual clock and numbered device reads."""

    def __init__(self, config: ProcedureConfig | None = None) -> None:
        self.clock = ManualClock(T0)
        self.state = TableState(TABLE, config or ProcedureConfig())
        self.device_seq = 0
        self.log: list[e.Event] = []

    @property
    def game_id(self) -> str | None:
        """The game number of the round in play, which a suspension names."""
        return self.state.round.game_id if self.state.round is not None else None

    @property
    def snap(self) -> dict[str, Any]:
        return snapshot(self.state)

    def do(self, command: c.Command) -> list[e.Event]:
        events = decide(self.state, command, self.clock.now())
        for event in events:
            self.state = evolve(self.state, event)
        self.log += events
        return events

    def step(self, command: c.Command, events: list[e.Event], **changes: Any) -> None:
        """Apply `command`: it produces exactly `events`, and the state changes by exactly `changes`."""
        before = self.snap
        assert self.do(command) == events
        assert self.snap == {**before, **changes}

    def refused(self, command: c.Command) -> ProcedureError:
        """`command` is refused with an error naming the phase, the command and what the phase expects; the state is
        left exactly as it was."""
        before, snap = self.state, self.snap
        with pytest.raises(ProcedureError) as info:
            decide(self.state, command, self.clock.now())
        assert self.state is before
        assert self.snap == snap
        error = info.value
        assert error.phase == self.state.phase.value
        assert error.command == type(command).__name__
        assert error.expected == expected_commands(self.state.phase)
        assert error.expected == tuple(cls.__name__ for cls in TRANSITIONS[self.state.phase])
        message = str(error)
        assert error.phase in message
        assert error.command in message
        assert f"expected: {', '.join(error.expected)}" in message
        return error

    def read(self, code: str | None, seq: int | None = -1, source: str = SHOE) -> c.CardRead:
        """A read as the shoe reports it; the device numbers its reads 1, 2, 3, ... unless `seq` says otherwise."""
        if seq == -1:
            self.device_seq += 1
            seq = self.device_seq
        return c.CardRead(None if code is None else card(code), source, seq)

    def draw(self, code: str | None, seq: int | None = -1, source: str = SHOE) -> list[e.Event]:
        return self.do(c.DrawCard(DEVICE, self.read(code, seq, source)))

    def took(self, read: c.CardRead, as_card: Card | None = None) -> dict[str, Any]:
        """What accepting `read` (as `as_card` if the pit boss corrected it) changes, beside the burn or the round."""
        taken = as_card or read.card
        assert taken is not None
        before = self.snap
        seen = dict(before["seen"])
        seen[taken.code] = seen.get(taken.code, 0) + 1
        last_seq = dict(before["last_device_seq"])
        if read.device_seq is not None:
            last_seq[read.source] = read.device_seq
        return {"cards_drawn": before["cards_drawn"] + 1, "seen": seen, "last_device_seq": last_seq}

    def open_and_close(self) -> None:
        self.do(c.OpenBetting(DEALER))
        self.clock.advance(self.state.config.betting_seconds)
        self.do(c.CloseBetting(DEALER))


def ready_table(config: ProcedureConfig | None = None, burns: str = BURNS) -> Table:
    """A table whose first shoe is shuffled, cut and burned."""
    t = Table(config)
    t.do(c.ConfirmShuffle(DEALER))
    t.do(c.PlaceCutCard(DEALER))
    for code in burns.split():
        t.draw(code)
    assert t.state.phase is Phase.READY
    return t


def dealing_table(codes: str = "", config: ProcedureConfig | None = None, burns: str = BURNS) -> Table:
    """A table in its first round, "no more bets" called, with `codes` dealt."""
    t = ready_table(config, burns)
    t.open_and_close()
    for code in codes.split():
        t.draw(code)
    return t


def completed(player: str, banker: str, number: int, game_id: str, last_hand: bool = False) -> e.RoundCompleted:
    """The result the rules give for these hands (checked against hand-computed values where it matters)."""
    result = outcome(cards(player), cards(banker))
    return e.RoundCompleted(
        round=number,
        game_id=game_id,
        player=cards(player),
        banker=cards(banker),
        player_total=result.player_total,
        banker_total=result.banker_total,
        winner=result.winner,
        natural=result.natural,
        player_pair=result.player_pair,
        banker_pair=result.banker_pair,
        last_hand=last_hand,
    )


# ---------------------------------------------------------------------------------------------------------------------
# A new shoe: shuffle, cut, burn.


def test_a_new_shoe_is_shuffled_cut_and_burned_before_the_first_round() -> None:
    t = Table()
    assert t.snap == INITIAL
    t.refused(c.OpenBetting(DEALER))
    t.refused(c.PlaceCutCard(DEALER))

    t.step(c.ConfirmShuffle(DEALER), [e.ShuffleConfirmed(1, DEALER)], phase=Phase.AWAITING_CUT, shoe=1, dealer=DEALER)
    t.refused(c.OpenBetting(DEALER))
    t.refused(c.ConfirmShuffle(DEALER))

    t.step(
        c.PlaceCutCard(DEALER),
        [e.CutCardPlaced(1, 416 - 52, 8), e.BurnRequired("shuffle", 6)],
        phase=Phase.BURNING,
        cut_position=364,
        burn=burn("shuffle", 6),
    )
    t.refused(c.OpenBetting(DEALER))

    for burned, code in enumerate(BURNS.split(), start=1):
        read = t.read(code)
        done = burned == 6
        t.step(
            c.DrawCard(DEVICE, read),
            [e.CardBurned(c.CardRead(card(code), SHOE, burned)), *([e.BurnCompleted("shuffle")] if done else [])],
            **t.took(read),
            phase=Phase.READY if done else Phase.BURNING,
            burn=None if done else burn("shuffle", 6 - burned),
            counts=counts(burned=burned),
        )
    assert t.snap == {
        **INITIAL,
        "phase": Phase.READY,
        "dealer": DEALER,
        "shoe": 1,
        "cut_position": 364,
        "cards_drawn": 6,
        "seen": {code: 1 for code in BURNS.split()},
        "last_device_seq": {SHOE: 6},
        "counts": counts(burned=6),
    }


@pytest.mark.parametrize("position", [10, 200, 364, 416])
def test_the_cut_card_may_be_placed_at_an_explicit_position(position: int) -> None:
    t = Table()
    t.do(c.ConfirmShuffle(DEALER))
    t.step(
        c.PlaceCutCard(DEALER, position),
        [e.CutCardPlaced(1, position, 8), e.BurnRequired("shuffle", 6)],
        phase=Phase.BURNING,
        cut_position=position,
        burn=burn("shuffle", 6),
    )


@pytest.mark.parametrize("position", [-1, 0, 9, 417, 1000])
def test_a_cut_card_out_of_range_is_refused(position: int) -> None:
    t = Table()
    t.do(c.ConfirmShuffle(DEALER))
    error = t.refused(c.PlaceCutCard(DEALER, position))
    assert error.reason == f"the cut card must leave 10 to 416 cards in front, not {position}"


def test_the_default_cut_follows_the_configuration() -> None:
    t = Table(ProcedureConfig(decks=6, cut_card_from_back=60, burn_after_shuffle=4))
    t.do(c.ConfirmShuffle(DEALER))
    t.step(
        c.PlaceCutCard(DEALER),
        [e.CutCardPlaced(1, 6 * 52 - 60, 6), e.BurnRequired("shuffle", 4)],
        phase=Phase.BURNING,
        cut_position=252,
        burn=burn("shuffle", 4),
    )


def test_a_table_that_burns_nothing_after_the_shuffle_is_ready_at_once() -> None:
    t = Table(ProcedureConfig(burn_after_shuffle=0))
    t.do(c.ConfirmShuffle(DEALER))
    t.step(
        c.PlaceCutCard(DEALER),
        [e.CutCardPlaced(1, 364, 8), e.BurnRequired("shuffle", 0), e.BurnCompleted("shuffle")],
        phase=Phase.READY,
        cut_position=364,
    )
    t.do(c.OpenBetting(DEALER))
    assert t.state.phase is Phase.BETTING_OPEN


# ---------------------------------------------------------------------------------------------------------------------
# Betting: the game number, the timer, "no more bets".


def test_opening_betting_starts_a_round_with_a_game_number_and_a_timer() -> None:
    t = ready_table()
    events = t.do(c.OpenBetting(DEALER))
    assert len(events) == 1 and isinstance(events[0], e.BettingOpened)
    gid = events[0].game_id
    assert TABLE in gid
    assert "150926" in gid  # the UTC start time, hhmmss
    assert events == [e.BettingOpened(1, gid, T0, T0 + timedelta(seconds=15))]
    assert t.snap == {
        **snapshot(ready_table().state),
        "phase": Phase.BETTING_OPEN,
        "rounds_started": 1,
        "round": round_(1, gid, T0, T0 + timedelta(seconds=15)),
    }
    assert next_side(t.state) is Side.PLAYER
    t.refused(c.OpenBetting(DEALER))


def test_every_round_gets_its_own_game_number_from_its_own_start_time() -> None:
    t = ready_table(ProcedureConfig(betting_seconds=20))
    t.clock.advance(8 * 3600 + 50 * 60 + 33)  # 23:59:59
    t.open_and_close()
    first = t.state.round
    assert (
        first is not None and "235959" in first.game_id and first.closes_at == first.opened_at + timedelta(seconds=20)
    )
    for code in ["4H", "KD", "5S", "2C"]:
        t.draw(code)
    t.clock.advance(1)  # 00:00:20 the next day
    t.do(c.OpenBetting(DEALER))
    second = t.state.round
    assert second is not None and second.number == 2
    assert "000020" in second.game_id and TABLE in second.game_id
    assert second.game_id != first.game_id


def test_no_more_bets_is_refused_before_the_timer_ends() -> None:
    t = ready_table()
    t.do(c.OpenBetting(DEALER))
    gid = t.state.round.game_id if t.state.round else ""
    t.clock.advance(14.9)
    error = t.refused(c.CloseBetting(DEALER))
    assert error.phase == "betting_open"
    assert error.expected == (
        "CloseBetting",
        "DrawCard",
        "ReportCutCard",
        "DeclareError",
        "ReportSourceFailure",
        "ReportDisagreement",
        "TakeSeat",
        "ChangeSeat",
        "LeaveSeat",
        "PassRound",
    )
    assert "this table does not allow early close" in error.reason
    t.clock.advance(0.1)  # the timer ends
    t.step(c.CloseBetting(DEALER), [e.BettingClosed(1, gid, False)], phase=Phase.DEALING)
    t.refused(c.CloseBetting(DEALER))


def test_no_more_bets_may_be_called_early_where_the_table_allows_it() -> None:
    t = ready_table(ProcedureConfig(allow_early_close=True))
    t.do(c.OpenBetting(DEALER))
    gid = t.state.round.game_id if t.state.round else ""
    t.clock.advance(3)
    t.step(c.CloseBetting(DEALER), [e.BettingClosed(1, gid, True)], phase=Phase.DEALING)


# ---------------------------------------------------------------------------------------------------------------------
# The deal.

# (name, cards in draw order, who receives each, hand-computed player total, banker total, winner)
DEALS = [
    ("player natural", "4H KD 5S 2C", "PBPB", 9, 2, Winner.PLAYER),
    ("naturals and pairs", "4H QD 4S QC", "PBPB", 8, 0, Winner.PLAYER),
    ("banker natural: the player does not draw on 5", "5H 4D KS 4C", "PBPB", 5, 8, Winner.BANKER),
    ("both stand on 7: tie", "KH QD 7S 7C", "PBPB", 7, 7, Winner.TIE),
    ("player third card, banker stands on 6 against a 9", "2H 6D 3S KC 9C", "PBPBP", 4, 6, Winner.BANKER),
    ("banker 3 draws against a 7", "2H 3D 3S KC 7H 5C", "PBPBPB", 2, 8, Winner.BANKER),
    ("banker 3 stands against an 8", "2H 3D 3S KC 8D", "PBPBP", 3, 3, Winner.TIE),
    ("banker 6 draws against a 6", "AH 6D 4S KC 6S 9H", "PBPBPB", 1, 5, Winner.BANKER),
    ("player stands, banker draws on 5", "3H 2D 4S 3C 4H", "PBPBB", 7, 9, Winner.BANKER),
]


@pytest.mark.parametrize(("codes", "sides", "player_total", "banker_total", "winner"),
                         [deal[1:] for deal in DEALS], ids=[deal[0] for deal in DEALS])  # fmt: skip
def test_cards_are_dealt_by_the_rules_and_the_result_recorded(
    codes: str, sides: str, player_total: int, banker_total: int, winner: Winner
) -> None:
    t = dealing_table()
    assert t.state.round is not None
    opened = (t.state.round.number, t.state.round.game_id, t.state.round.opened_at, t.state.round.closes_at)
    dealt: tuple[tuple[Side, Card], ...] = ()
    draws = codes.split()
    player = " ".join(code for code, side in zip(draws, sides, strict=True) if side == "P")
    banker = " ".join(code for code, side in zip(draws, sides, strict=True) if side == "B")
    result = completed(player, banker, 1, opened[1])
    assert (result.player_total, result.banker_total, result.winner) == (player_total, banker_total, winner)
    for position, (code, side) in enumerate(zip(draws, sides, strict=True), start=1):
        assert next_side(t.state) is SIDES[side]
        read = t.read(code)
        dealt_event = e.CardDealt(
            1, position, SIDES[side], c.CardRead(card(code), SHOE, read.device_seq), game_id=opened[1]
        )
        dealt = (*dealt, (SIDES[side], card(code)))
        if position < len(draws):
            t.step(
                c.DrawCard(DEVICE, read),
                [dealt_event],
                **t.took(read),
                round=round_(*opened, dealt=dealt),
                counts=counts(burned=6, dealt=position),
            )
        else:
            t.step(
                c.DrawCard(DEVICE, read),
                [dealt_event, result],
                **t.took(read),
                phase=Phase.READY,
                round=None,
                counts=counts(burned=6, dealt=position, rounds=1),
                last_result=result,
            )
    # No hand ever takes another card: the next one is not due.
    extra = t.read("9D")
    t.step(
        c.DrawCard(DEVICE, extra),
        [
            e.TableSuspended(
                "card_not_due",
                "no card is due in phase ready",
                c.CardRead(card("9D"), SHOE, extra.device_seq),
                game_id=t.game_id,
            )
        ],
        phase=Phase.SUSPENDED,
        suspension=suspension(SuspensionReason.CARD_NOT_DUE, "no card is due in phase ready", Phase.READY, extra),
        cards_drawn=t.snap["cards_drawn"] + 1,
        counts=counts(burned=6, dealt=len(draws), rounds=1, set_aside=1),
    )


def test_the_result_carries_naturals_and_pairs() -> None:
    t = dealing_table("4H QD 4S")
    events = t.draw("QC")
    result = events[-1]
    assert isinstance(result, e.RoundCompleted)
    assert (result.natural, result.player_pair, result.banker_pair) == (True, True, True)
    t = dealing_table("KH QD 7S")
    result = t.draw("7C")[-1]
    assert isinstance(result, e.RoundCompleted)
    assert (result.winner, result.natural, result.player_pair, result.banker_pair) == (Winner.TIE, False, False, False)


# ---------------------------------------------------------------------------------------------------------------------
# Errors that suspend the table.


def test_a_card_while_betting_is_open_suspends_and_nothing_is_dealt() -> None:
    t = ready_table()
    t.do(c.OpenBetting(DEALER))
    detail = "a card came out while betting was open"
    read = t.read("QH")
    t.step(
        c.DrawCard(DEVICE, read),
        [
            e.TableSuspended(
                "card_while_betting", detail, c.CardRead(card("QH"), SHOE, read.device_seq), game_id=t.game_id
            )
        ],
        phase=Phase.SUSPENDED,
        suspension=suspension(SuspensionReason.CARD_WHILE_BETTING, detail, Phase.BETTING_OPEN, read),
        cards_drawn=7,
        counts=counts(burned=6, set_aside=1),
    )
    assert t.state.round is not None and t.state.round.dealt == ()
    assert t.state.copies_seen(card("QH")) == 0 and dict(t.state.last_device_seq) == {SHOE: 6}
    # The pit boss lets play go on: 3 cards burned, then betting is open again, and the round is dealt from scratch.
    t.step(
        c.ContinuePlay(BOSS, "card set aside"),
        [
            e.PlayContinued(BOSS, "card set aside"),
            e.TableResumed(e.Resumption.CONTINUED),
            e.BurnRequired("error", 3, BOSS),
        ],
        phase=Phase.BURNING,
        suspension=None,
        burn=burn("error", 3, Phase.BETTING_OPEN, BOSS),
    )
    for code in ["8C", "9C"]:
        t.draw(code)
    # The burn's last card puts betting back: the players get their betting time again, from that moment.
    t.clock.advance(120)  # the pit boss took two minutes; the round's own deadline is long past
    assert t.state.round is not None
    opened, gid = t.state.round.opened_at, t.state.round.game_id
    back = t.clock.now() + timedelta(seconds=15)
    read = t.read("10C")
    t.step(
        c.DrawCard(DEVICE, read),
        [
            e.CardBurned(c.CardRead(card("10C"), SHOE, read.device_seq)),
            e.BurnCompleted("error"),
            e.BettingReopened(1, gid, back),
        ],
        **t.took(read),
        phase=Phase.BETTING_OPEN,
        burn=None,
        round=round_(1, gid, opened, back),
        counts=counts(burned=9, set_aside=1),
    )
    t.clock.advance(14)
    assert "this table does not allow early close" in t.refused(c.CloseBetting(DEALER)).reason
    t.clock.advance(1)
    t.do(c.CloseBetting(DEALER))
    assert [type(event) for event in t.draw("4H")] == [e.CardDealt]
    assert t.state.round is not None and t.state.round.dealt == ((Side.PLAYER, card("4H")),)


def card_while_betting(config: ProcedureConfig, seconds_before: int = 0) -> Table:
    """A table whose first round got a card while betting was open, `seconds_before` after it opened."""
    t = ready_table(config)
    t.do(c.OpenBetting(DEALER))
    t.clock.advance(seconds_before)
    t.draw("QH")
    assert t.state.phase is Phase.SUSPENDED
    return t


def test_the_betting_time_given_back_after_an_error_is_configured() -> None:
    t = card_while_betting(ProcedureConfig(betting_seconds_after_error=40))
    t.do(c.ContinuePlay(BOSS, "card set aside"))
    for code in ["8C", "9C", "10C"]:
        t.draw(code)
    assert t.log[-1] == e.BettingReopened(1, t.game_id or "", t.clock.now() + timedelta(seconds=40))
    assert t.state.round is not None and t.state.round.closes_at == t.clock.now() + timedelta(seconds=40)


def test_the_betting_time_left_is_never_cut_by_an_error() -> None:
    # A card 2 s into a 15 s window, resolved at once: the round keeps its own deadline, later than 5 s from now.
    t = card_while_betting(ProcedureConfig(betting_seconds_after_error=5), seconds_before=2)
    assert t.state.round is not None
    deadline = t.state.round.closes_at
    t.do(c.ContinuePlay(BOSS, "card set aside"))
    for code in ["8C", "9C", "10C"]:
        t.draw(code)
    assert t.log[-1] == e.BettingReopened(1, t.game_id or "", deadline)
    assert t.state.round is not None and t.state.round.closes_at == deadline


def test_a_table_that_gives_no_betting_time_back_closes_betting_at_once() -> None:
    t = card_while_betting(ProcedureConfig(betting_seconds_after_error=0))
    t.do(c.ContinuePlay(BOSS, "card set aside"))
    t.clock.advance(60)
    for code in ["8C", "9C", "10C"]:
        t.draw(code)
    assert t.log[-1] == e.BurnCompleted("error") and t.state.phase is Phase.BETTING_OPEN
    t.do(c.CloseBetting(DEALER))  # the round's deadline is past: "no more bets" at once
    assert t.state.phase is Phase.DEALING


def test_without_an_error_burn_betting_is_given_back_when_the_pit_boss_continues() -> None:
    t = card_while_betting(ProcedureConfig(burn_after_error=0))
    t.clock.advance(90)
    assert t.state.round is not None
    opened, gid = t.state.round.opened_at, t.state.round.game_id
    back = t.clock.now() + timedelta(seconds=15)
    t.step(
        c.ContinuePlay(BOSS, "card set aside"),
        [
            e.PlayContinued(BOSS, "card set aside"),
            e.TableResumed(e.Resumption.CONTINUED),
            e.BettingReopened(1, gid, back),
        ],
        phase=Phase.BETTING_OPEN,
        suspension=None,
        round=round_(1, gid, opened, back),
    )


def test_a_corrected_read_that_ends_the_error_burn_gives_the_betting_time_back() -> None:
    t = card_while_betting(ProcedureConfig())
    t.do(c.ContinuePlay(BOSS, "card set aside"))
    t.draw("8C")
    t.draw("9C")
    t.draw(None)  # the burn's last card is unreadable: suspended again, the pit boss names it
    t.do(c.CorrectCard(BOSS, 0, card("10C"), "read by hand"))
    events = t.do(c.ContinuePlay(BOSS, "burned as 10C"))
    # That error calls for its own burn: betting comes back only once that one is done.
    assert [type(event) for event in events] == [
        e.PlayContinued,
        e.TableResumed,
        e.CardBurned,
        e.BurnCompleted,
        e.BurnRequired,
    ]
    assert t.state.phase is Phase.BURNING and t.state.burn is not None and t.state.burn.then is Phase.BETTING_OPEN
    for code in ["JC", "QC"]:
        t.draw(code)
    t.clock.advance(30)
    t.draw("KC")
    assert t.log[-1] == e.BettingReopened(1, t.game_id or "", t.clock.now() + timedelta(seconds=15))


def test_the_betting_time_given_back_is_read_from_the_table_file_within_bounds() -> None:
    assert procedure_from_mapping({"betting_seconds_after_error": 20}).betting_seconds_after_error == 20
    assert ProcedureConfig().betting_seconds_after_error == ProcedureConfig().betting_seconds  # the whole time back
    with pytest.raises(ConfigError, match=r"procedure\.betting_seconds_after_error: at most 86400 seconds"):
        procedure_from_mapping({"betting_seconds_after_error": 86_401})
    with pytest.raises(ConfigError, match="expected a whole number of at least 0"):
        procedure_from_mapping({"betting_seconds_after_error": -1})


def test_an_error_burn_in_the_deal_gives_no_betting_time() -> None:
    t = dealing_table("2H 6D")
    t.do(c.DeclareError(DEALER, "card_exposed"))
    t.do(c.ContinuePlay(BOSS, "fine"))
    for code in ["8C", "9C", "10C"]:
        t.draw(code)
    assert t.log[-1] == e.BurnCompleted("error") and t.state.phase is Phase.DEALING


def test_a_card_when_none_is_due_suspends() -> None:
    t = ready_table()
    read = t.read("QH")
    detail = "no card is due in phase ready"
    t.step(
        c.DrawCard(DEVICE, read),
        [e.TableSuspended("card_not_due", detail, c.CardRead(card("QH"), SHOE, 7), game_id=t.game_id)],
        phase=Phase.SUSPENDED,
        suspension=suspension(SuspensionReason.CARD_NOT_DUE, detail, Phase.READY, read),
        cards_drawn=7,
        counts=counts(burned=6, set_aside=1),
    )
    # A pit boss cannot turn a card that was not due into a dealt one, nor void a round that is not there.
    assert "where no card is due" in t.refused(c.CorrectCard(BOSS, 0, card("QD"), "misread")).reason
    assert "no round is in play" in t.refused(c.VoidRound(BOSS, "misdeal")).reason
    t.step(
        c.ContinuePlay(BOSS, "burned"),
        [e.PlayContinued(BOSS, "burned"), e.TableResumed(e.Resumption.CONTINUED), e.BurnRequired("error", 3, BOSS)],
        phase=Phase.BURNING,
        suspension=None,
        burn=burn("error", 3, Phase.READY, BOSS),
    )


def test_an_unreadable_card_suspends_and_a_pit_boss_correction_deals_it() -> None:
    t = dealing_table("2H 3D")
    assert t.state.round is not None
    opened = (1, t.state.round.game_id, t.state.round.opened_at, t.state.round.closes_at)
    dealt = ((Side.PLAYER, card("2H")), (Side.BANKER, card("3D")))
    before = t.snap
    unreadable = t.read(None)
    detail = "shoe-1 could not read the card"
    t.step(
        c.DrawCard(DEVICE, unreadable),
        [e.TableSuspended("unreadable_card", detail, c.CardRead(None, SHOE, 9), game_id=t.game_id)],
        phase=Phase.SUSPENDED,
        suspension=suspension(SuspensionReason.UNREADABLE_CARD, detail, Phase.DEALING, unreadable),
        cards_drawn=9,
        counts=counts(burned=6, dealt=2, set_aside=1),
    )
    t.refused(c.CorrectCard(BOSS, 0, card("QH"), "  "))  # a correction needs a reason
    t.step(
        c.CorrectCard(BOSS, 0, card("QH"), "read by hand"),
        [e.CardCorrected(1, 0, None, card("QH"), "read by hand", BOSS, game_id=t.game_id)],
        suspension=suspension(
            SuspensionReason.UNREADABLE_CARD, detail, Phase.DEALING, unreadable, corrected=card("QH"), corrections=1
        ),
        counts=counts(burned=6, dealt=2, set_aside=1, corrections=1),
    )
    took = t.took(unreadable, card("QH"))
    t.step(
        c.ContinuePlay(BOSS, "corrected"),
        [
            e.PlayContinued(BOSS, "corrected"),
            e.TableResumed(e.Resumption.CORRECTED),
            e.CardDealt(1, 3, Side.PLAYER, c.CardRead(card("QH"), SHOE, 9), game_id=opened[1]),
            e.BurnRequired("error", 3, BOSS),
        ],
        phase=Phase.BURNING,
        suspension=None,
        burn=burn("error", 3, Phase.DEALING, BOSS),
        round=round_(*opened, dealt=(*dealt, (Side.PLAYER, card("QH")))),
        counts=counts(burned=6, dealt=3, corrections=1),
        cards_drawn=before["cards_drawn"] + 1,  # the read, dealt as corrected: drawn once
        seen=took["seen"],
        last_device_seq={SHOE: 9},
    )
    for code in ["8C", "9C", "10C"]:
        t.draw(code)
    assert t.log[-1] == e.BurnCompleted("error")
    assert t.state.phase is Phase.DEALING and t.state.burn is None and next_side(t.state) is Side.BANKER
    t.draw("KC")
    t.draw("7H")
    result = t.draw("5C")[-1]
    assert result == completed("2H QH 7H", "3D KC 5C", 1, opened[1])
    assert (result.winner, result.player_total, result.banker_total) == (Winner.PLAYER, 9, 8)
    assert t.snap["counts"] == counts(dealt=6, burned=9, corrections=1, rounds=1)


@pytest.mark.parametrize(
    ("seq", "source", "suspends"),
    [
        (20, SHOE, True),  # the same read reported again
        (21, SHOE, False),
        (1, SHOE, False),  # device counters wrap round and restart: only a repeat counts
        (20, "scanner-2", False),  # another device's numbering
    ],
)
def test_a_read_whose_device_sequence_comes_again_suspends(seq: int, source: str, suspends: bool) -> None:
    t = dealing_table()
    t.draw("2H", seq=20)
    read = t.read("3D", seq=seq, source=source)
    if not suspends:
        assert [type(event) for event in t.do(c.DrawCard(DEVICE, read))] == [e.CardDealt]
        return
    detail = f"shoe-1 reported sequence {seq} again"
    t.step(
        c.DrawCard(DEVICE, read),
        [e.TableSuspended("duplicate_read", detail, c.CardRead(card("3D"), SHOE, seq), game_id=t.game_id)],
        phase=Phase.SUSPENDED,
        suspension=suspension(SuspensionReason.DUPLICATE_READ, detail, Phase.DEALING, read),
        cards_drawn=8,
        counts=counts(burned=6, dealt=1, set_aside=1),
    )


def test_reads_without_a_device_sequence_are_never_duplicates() -> None:
    t = dealing_table()
    t.draw("2H", seq=None)
    t.draw("2H", seq=None)
    assert t.state.phase is Phase.DEALING and t.state.copies_seen(card("2H")) == 2


def test_more_copies_of_a_card_than_the_shoe_holds_suspends() -> None:
    config = ProcedureConfig(decks=1, cut_card_from_back=10)
    t = dealing_table("KH", config, burns="AS 2S 3S 4S 5S 6S")
    assert t.state.cut_position == 42
    read = t.read("AS")
    detail = "AS seen 2 times; the shoe holds 1"
    t.step(
        c.DrawCard(DEVICE, read),
        [e.TableSuspended("too_many_copies", detail, c.CardRead(card("AS"), SHOE, 8), game_id=t.game_id)],
        phase=Phase.SUSPENDED,
        suspension=suspension(SuspensionReason.TOO_MANY_COPIES, detail, Phase.DEALING, read),
        cards_drawn=8,
        counts=counts(burned=6, dealt=1, set_aside=1),
    )


def test_the_ninth_copy_in_an_eight_deck_shoe_suspends() -> None:
    t = dealing_table("QS QS QS", burns="QS QS QS QS QS 9H")
    assert t.state.copies_seen(card("QS")) == 8
    events = t.draw("QS")
    assert events == [
        e.TableSuspended(
            "too_many_copies", "QS seen 9 times; the shoe holds 8", c.CardRead(card("QS"), SHOE, 10), game_id=t.game_id
        )
    ]


@pytest.mark.parametrize("phase", [Phase.BURNING, Phase.BETTING_OPEN, Phase.DEALING])
def test_a_source_failure_in_play_suspends(phase: Phase) -> None:
    if phase is Phase.BURNING:
        t = Table()
        t.do(c.ConfirmShuffle(DEALER))
        t.do(c.PlaceCutCard(DEALER))
    elif phase is Phase.BETTING_OPEN:
        t = ready_table()
        t.do(c.OpenBetting(DEALER))
    else:
        t = dealing_table("2H 3D")
    detail = "shoe-1 failed: cable unplugged"
    t.step(
        c.ReportSourceFailure("system:supervisor", SHOE, "cable unplugged"),
        [e.TableSuspended("source_failed", detail, game_id=t.game_id)],
        phase=Phase.SUSPENDED,
        suspension=suspension(SuspensionReason.SOURCE_FAILED, detail, phase),
    )


def test_a_source_failure_between_rounds_changes_nothing() -> None:
    t = ready_table()
    t.step(c.ReportSourceFailure("system:supervisor", SHOE, "cable unplugged"), [])
    fresh = Table()
    fresh.refused(c.ReportSourceFailure("system:supervisor", SHOE))


@pytest.mark.parametrize(("kind", "detail", "logged"), [("card_exposed", "3rd card flipped", "card_exposed: 3rd card "
                                                         "flipped"), ("misdeal", "", "misdeal")])  # fmt: skip
def test_an_error_the_dealer_declares_suspends(kind: str, detail: str, logged: str) -> None:
    t = dealing_table("2H 3D")
    t.step(
        c.DeclareError(DEALER, kind, detail),
        [e.TableSuspended("dealer_declared", logged, game_id=t.game_id)],
        phase=Phase.SUSPENDED,
        suspension=suspension(SuspensionReason.DEALER_DECLARED, logged, Phase.DEALING),
    )


def test_sources_that_disagree_suspend_with_the_first_read_set_aside() -> None:
    t = dealing_table("2H")
    shoe_read = t.read("QH")
    camera_read = c.CardRead(card("QD"), "camera-1", None, 0.91, "crop-17")
    t.step(
        c.ReportDisagreement("system:supervisor", "shoe QH, camera QD", (shoe_read, camera_read)),
        [
            e.TableSuspended(
                "sources_disagree", "shoe QH, camera QD", c.CardRead(card("QH"), SHOE, 8), game_id=t.game_id
            )
        ],
        phase=Phase.SUSPENDED,
        suspension=suspension(SuspensionReason.SOURCES_DISAGREE, "shoe QH, camera QD", Phase.DEALING, shoe_read),
        cards_drawn=8,
        counts=counts(burned=6, dealt=1, set_aside=1),
    )
    t.do(c.CorrectCard(BOSS, 0, card("QD"), "the camera is right"))
    events = t.do(c.ContinuePlay(BOSS, "resolved"))
    assert t.state.round is not None
    assert events[1] == e.TableResumed(e.Resumption.CORRECTED)
    assert events[2] == e.CardDealt(1, 2, Side.BANKER, c.CardRead(card("QD"), SHOE, 8), game_id=t.state.round.game_id)


# ---------------------------------------------------------------------------------------------------------------------
# While suspended.


def suspended_table() -> Table:
    t = dealing_table("2H 6D")
    t.draw(None)  # unreadable: the table waits for the pit boss
    assert t.state.phase is Phase.SUSPENDED
    return t


def test_cards_read_while_suspended_are_logged_and_set_aside() -> None:
    t = suspended_table()
    held = t.snap["suspension"]
    for code in ("QH", None):
        read = t.read(code)
        t.step(
            c.DrawCard(DEVICE, read),
            [e.CardReadWhileSuspended(c.CardRead(read.card, SHOE, read.device_seq))],
            cards_drawn=t.snap["cards_drawn"] + 1,
            counts={**t.snap["counts"], "set_aside": t.snap["counts"]["set_aside"] + 1},
        )
    assert t.snap["suspension"] == held


@pytest.mark.parametrize(
    "command",
    [
        c.OpenBetting(DEALER),
        c.CloseBetting(DEALER),
        c.ConfirmShuffle(DEALER),
        c.PlaceCutCard(DEALER),
        c.ChangeDealer(DEALER, "dealer:cid"),
        c.DeclareError(DEALER, "misdeal"),
        c.ReportSourceFailure("system:supervisor", SHOE),
        c.ReportDisagreement("system:supervisor", "differ"),
    ],
    ids=lambda command: type(command).__name__,
)
def test_dealer_commands_are_refused_while_suspended(command: c.Command) -> None:
    assert suspended_table().refused(command).reason == "not allowed now"


@pytest.mark.parametrize("actor", ["dealer:x", "device:shoe-1", "system:sim"])
def test_only_a_pit_boss_decides(actor: str) -> None:
    t = suspended_table()
    for command in (
        c.CorrectCard(actor, 0, card("QH"), "misread"),
        c.ContinuePlay(actor, "fine"),
        c.VoidRound(actor, "misdeal"),
    ):
        assert t.refused(command).reason == f"only a pit boss may decide, not {actor}"


@pytest.mark.parametrize("actor", ["bob", "pitboss:bob", "pit_boss:", ""])
def test_an_actor_that_is_not_role_and_name_makes_no_command(actor: str) -> None:
    with pytest.raises(ValueError, match="an actor is written role:name"):
        c.ContinuePlay(actor, "fine")


def test_the_dealer_on_duty_cannot_resolve_their_own_error() -> None:
    t = suspended_table()
    assert t.state.dealer == DEALER
    for command in (
        c.CorrectCard("pit_boss:ann", 0, card("QH"), "misread"),
        c.ContinuePlay("pit_boss:ann", "fine"),
        c.VoidRound("pit_boss:ann", "misdeal"),
    ):
        assert t.refused(command).reason == "the dealer on duty cannot resolve an error at their own table"


@pytest.mark.parametrize("new_dealer", ["dealer:cid", "cid"])
def test_after_a_dealer_change_the_new_dealer_on_duty_is_the_one_refused(new_dealer: str) -> None:
    t = ready_table()
    t.do(c.ChangeDealer(DEALER, new_dealer))
    t.draw("9S")
    t.open_and_close()
    t.draw(None)
    assert t.state.dealer == new_dealer
    t.refused(c.ContinuePlay("pit_boss:cid", "fine"))
    events = t.do(c.ContinuePlay("pit_boss:ann", "fine"))  # Ann is off duty now
    assert events[0] == e.PlayContinued("pit_boss:ann", "fine")


def test_a_correction_of_a_dealt_card_keeps_the_original_in_the_log() -> None:
    t = dealing_table("2H 6D 3S KC")  # Player 5 draws; Banker 6
    assert t.state.round is not None
    opened = (1, t.state.round.game_id, t.state.round.opened_at, t.state.round.closes_at)
    t.do(c.DeclareError(DEALER, "wrong_card", "the shoe misread the 3rd card"))
    seen = {**t.snap["seen"], "3S": t.snap["seen"]["3S"] - 1, "4S": 1}
    declared = t.snap["suspension"]
    t.step(
        c.CorrectCard(BOSS, 3, card("4S"), "camera shows 4S"),
        [e.CardCorrected(1, 3, card("3S"), card("4S"), "camera shows 4S", BOSS, game_id=t.game_id)],
        round=round_(*opened, dealt=tuple(zip(
            (Side.PLAYER, Side.BANKER, Side.PLAYER, Side.BANKER), cards("2H 6D 4S KC"), strict=True))),
        seen={code: n for code, n in seen.items() if n},
        counts=counts(burned=6, dealt=4, corrections=1),
        suspension={**declared, "corrections": 1},
    )  # fmt: skip
    original = e.CardDealt(1, 3, Side.PLAYER, c.CardRead(card("3S"), SHOE, 9), game_id=opened[1])
    assert original in t.log  # the original read stays in the log
    # With 4S the Player has 6 and stands, the Banker 6 stands: continuing completes the round.
    result = completed("2H 4S", "6D KC", 1, opened[1])
    assert (result.winner, result.player_total, result.banker_total) == (Winner.TIE, 6, 6)
    t.step(
        c.ContinuePlay(BOSS, "corrected"),
        [
            e.PlayContinued(BOSS, "corrected"),
            e.TableResumed(e.Resumption.CORRECTED),
            result,
            e.BurnRequired("error", 3, BOSS),
        ],
        phase=Phase.BURNING,
        round=None,
        suspension=None,
        burn=burn("error", 3, Phase.READY, BOSS),
        last_result=result,
        counts=counts(burned=6, dealt=4, corrections=1, rounds=1),
    )


def test_a_correction_that_makes_the_dealt_cards_impossible_is_refused() -> None:
    t = dealing_table("2H 3D 3S KC 7H")  # Player 5 drew a 7; Banker 3 must draw
    t.do(c.DeclareError(DEALER, "wrong_card"))
    # With 5S the Player would have had 7 and stood: no third card could have been dealt.
    error = t.refused(c.CorrectCard(BOSS, 3, card("5S"), "camera shows 5S"))
    assert "break the rules" in error.reason and "void the round instead" in error.reason
    assert "is not a card of this round (1 to 5)" in t.refused(c.CorrectCard(BOSS, 6, card("5S"), "x")).reason
    assert "no card read is waiting" in t.refused(c.CorrectCard(BOSS, 0, card("5S"), "x")).reason


def test_a_correction_may_not_complete_the_deal_while_a_corrected_read_waits() -> None:
    t = dealing_table("2H 6D 3S KC")  # Player 5 draws next
    t.draw(None)
    t.do(c.CorrectCard(BOSS, 0, card("9H"), "read by hand"))
    error = t.refused(c.CorrectCard(BOSS, 3, card("4S"), "camera shows 4S"))  # Player 6 would stand
    assert "complete" in error.reason
    t = dealing_table("2H 6D 3S KC")
    t.draw(None)
    t.do(c.CorrectCard(BOSS, 3, card("4S"), "camera shows 4S"))  # completes the deal: the read has no place
    assert "complete" in t.refused(c.CorrectCard(BOSS, 0, card("9H"), "read by hand")).reason
    events = t.do(c.ContinuePlay(BOSS, "the read is set aside"))
    assert [type(event) for event in events] == [e.PlayContinued, e.TableResumed, e.RoundCompleted, e.BurnRequired]
    assert t.state.counts.set_aside == 1


def test_a_correction_during_an_error_burn_may_not_complete_the_deal() -> None:
    t = dealing_table("2H 6D 3S KC")
    t.do(c.DeclareError(DEALER, "card_exposed"))
    t.do(c.ContinuePlay(BOSS, "go on"))
    t.draw("8C")
    t.do(c.DeclareError(DEALER, "card_dropped"))
    assert t.state.suspension is not None and t.state.suspension.resume is Phase.BURNING
    assert "complete" in t.refused(c.CorrectCard(BOSS, 3, card("4S"), "camera shows 4S")).reason
    t.do(c.CorrectCard(BOSS, 3, card("AS"), "camera shows AS"))  # Player 3 still draws: allowed
    t.do(c.ContinuePlay(BOSS, "go on"))
    assert t.state.burn is not None and t.state.burn.remaining == 5
    for code in ["8C", "8C", "8C", "8C", "8C"]:
        t.draw(code)
    assert t.state.phase is Phase.DEALING and next_side(t.state) is Side.PLAYER


def test_resolving_an_error_burns_three_cards_on_the_pit_boss_approval_then_play_resumes() -> None:
    t = dealing_table("2H 6D")
    t.do(c.DeclareError(DEALER, "card_exposed"))
    t.step(
        c.ContinuePlay(BOSS, "exposed card is fine"),
        [
            e.PlayContinued(BOSS, "exposed card is fine"),
            e.TableResumed(e.Resumption.CONTINUED),
            e.BurnRequired("error", 3, BOSS),
        ],
        phase=Phase.BURNING,
        suspension=None,
        burn=burn("error", 3, Phase.DEALING, BOSS),
    )
    t.refused(c.OpenBetting(DEALER))
    for left, code in zip((2, 1), ("8C", "9C"), strict=True):
        read = t.read(code)
        t.step(
            c.DrawCard(DEVICE, read),
            [e.CardBurned(c.CardRead(card(code), SHOE, read.device_seq))],
            **t.took(read),
            burn=burn("error", left, Phase.DEALING, BOSS),
            counts={**t.snap["counts"], "burned": t.snap["counts"]["burned"] + 1},
        )
    read = t.read("10C")
    t.step(
        c.DrawCard(DEVICE, read),
        [e.CardBurned(c.CardRead(card("10C"), SHOE, read.device_seq)), e.BurnCompleted("error")],
        **t.took(read),
        phase=Phase.DEALING,
        burn=None,
        counts=counts(burned=9, dealt=2),
    )
    assert next_side(t.state) is Side.PLAYER
    assert [type(event) for event in t.draw("3S")] == [e.CardDealt]


def test_an_error_during_a_burn_adds_its_cards_to_the_burn() -> None:
    t = Table()
    t.do(c.ConfirmShuffle(DEALER))
    t.do(c.PlaceCutCard(DEALER))
    t.draw("2C")
    t.draw("3C")
    t.do(c.DeclareError(DEALER, "card_dropped"))
    t.step(
        c.ContinuePlay(BOSS, "dropped card burned"),
        [
            e.PlayContinued(BOSS, "dropped card burned"),
            e.TableResumed(e.Resumption.CONTINUED),
            e.BurnRequired("error", 3, BOSS),
        ],
        phase=Phase.BURNING,
        suspension=None,
        burn=burn("shuffle", 7, Phase.READY, BOSS),
    )
    for _ in range(6):
        t.draw("4C")
    assert t.state.phase is Phase.BURNING
    assert t.draw("4C")[-1] == e.BurnCompleted("shuffle")
    assert t.state.phase is Phase.READY and t.state.counts.burned == 9


def test_a_table_that_burns_nothing_after_an_error_resumes_at_once() -> None:
    t = dealing_table("2H 6D", ProcedureConfig(burn_after_error=0))
    t.do(c.DeclareError(DEALER, "card_exposed"))
    t.step(
        c.ContinuePlay(BOSS, "fine"),
        [e.PlayContinued(BOSS, "fine"), e.TableResumed(e.Resumption.CONTINUED)],
        phase=Phase.DEALING,
        suspension=None,
    )


def test_voiding_a_round_burns_three_cards_then_the_table_is_ready() -> None:
    t = dealing_table("2H 6D 3S")
    assert t.state.round is not None
    gid = t.state.round.game_id
    t.do(c.DeclareError(DEALER, "misdeal"))
    assert "a void needs a reason" in t.refused(c.VoidRound(BOSS, " ")).reason
    t.step(
        c.VoidRound(BOSS, "misdeal"),
        [e.RoundVoided(1, gid, "misdeal", BOSS), e.TableResumed(e.Resumption.VOIDED), e.BurnRequired("error", 3, BOSS)],
        phase=Phase.BURNING,
        round=None,
        suspension=None,
        burn=burn("error", 3, Phase.READY, BOSS),
        counts=counts(burned=6, dealt=3, voids=1),
    )
    for code in ["8C", "9C", "10C"]:
        t.draw(code)
    assert (
        t.snap["phase"] is Phase.READY
        and t.snap["burn"] is None
        and t.snap["counts"] == counts(burned=9, dealt=3, voids=1)
    )
    t.do(c.OpenBetting(DEALER))
    assert t.state.round is not None and t.state.round.number == 2


def test_voiding_a_round_during_its_error_burn_keeps_the_burn_going() -> None:
    t = dealing_table("2H 6D")
    t.do(c.DeclareError(DEALER, "card_exposed"))
    t.do(c.ContinuePlay(BOSS, "go on"))
    t.draw("8C")
    t.do(c.DeclareError(DEALER, "misdeal"))
    assert t.state.round is not None
    gid = t.state.round.game_id
    t.step(
        c.VoidRound(BOSS, "misdeal"),
        [e.RoundVoided(1, gid, "misdeal", BOSS), e.TableResumed(e.Resumption.VOIDED), e.BurnRequired("error", 3, BOSS)],
        phase=Phase.BURNING,
        round=None,
        suspension=None,
        burn=burn("error", 5, Phase.READY, BOSS),
        counts={**t.snap["counts"], "voids": 1},
    )
    for _ in range(5):
        t.draw("9C")
    assert t.log[-1] == e.BurnCompleted("error") and t.state.phase is Phase.READY


# ---------------------------------------------------------------------------------------------------------------------
# The cut card and the end of the shoe.


def test_the_cut_card_mid_round_makes_it_the_last_hand_and_the_shoe_ends() -> None:
    t = dealing_table("4H KD")
    assert t.state.round is not None
    gid = t.state.round.game_id
    t.step(c.ReportCutCard(DEVICE, "shoe"), [e.CutCardAppeared("shoe", 1)], last_round=1)
    t.step(c.ReportCutCard(DEALER), [])  # a second report changes nothing
    t.draw("5S")
    read = t.read("2C")
    result = completed("4H 5S", "KD 2C", 1, gid, last_hand=True)
    summary = e.ShoeEnded(
        shoe=1,
        rounds=1,
        voids=0,
        corrections=0,
        cards_dealt=4,
        cards_burned=6,
        cards_set_aside=0,
        composition_ok=True,
        composition_detail="10 cards out of 416, no card over 8",
    )
    t.step(
        c.DrawCard(DEVICE, read),
        [e.CardDealt(1, 4, Side.BANKER, c.CardRead(card("2C"), SHOE, 10), game_id=gid), result, summary],
        **t.took(read),
        phase=Phase.AWAITING_SHUFFLE,
        round=None,
        cut_position=None,
        last_result=result,
        counts=counts(burned=6, dealt=4, rounds=1),
    )
    assert t.state.cards_drawn == 10


def test_the_shoe_summary_counts_rounds_cards_voids_and_corrections() -> None:
    t = ready_table()
    t.open_and_close()
    for code in ["4H", "KD", "5S", "2C"]:  # round 1: natural
        t.draw(code)
    t.open_and_close()  # round 2: an unreadable card, corrected, and a stray card set aside
    t.draw("2H")
    t.draw("6D")
    t.draw(None)
    t.draw("9S")
    t.do(c.CorrectCard(BOSS, 0, card("3S"), "read by hand"))
    t.do(c.ContinuePlay(BOSS, "corrected"))
    for code in ["7C", "8C", "9C", "KC", "9H"]:
        t.draw(code)
    assert isinstance(t.log[-1], e.RoundCompleted) and t.log[-1].round == 2
    t.open_and_close()  # round 3: voided
    t.draw("AH")
    t.do(c.DeclareError(DEALER, "misdeal"))
    t.do(c.VoidRound(BOSS, "misdeal"))
    for code in ["JC", "QC", "KH"]:
        t.draw(code)
    t.step(c.ReportCutCard(DEALER), [e.CutCardAppeared("dealer", 4)], last_round=4)
    t.open_and_close()  # round 4: the last hand
    for code in ["4S", "QD", "5D"]:
        t.draw(code)
    assert t.state.round is not None
    gid = t.state.round.game_id
    events = t.draw("2S")
    assert events[1] == completed("4S 5D", "QD 2S", 4, gid, last_hand=True)
    assert events[2] == e.ShoeEnded(
        shoe=1,
        rounds=3,
        voids=1,
        corrections=1,
        cards_dealt=14,
        cards_burned=12,
        cards_set_aside=1,
        composition_ok=True,
        composition_detail="27 cards out of 416, no card over 8",
    )
    assert t.state.cards_drawn == 27 and t.state.phase is Phase.AWAITING_SHUFFLE


def test_the_shoe_summary_flags_more_copies_than_the_shoe_holds() -> None:
    config = ProcedureConfig(decks=1, cut_card_from_back=10)
    t = dealing_table("4H KD 5H", config, burns="AS 2S 3S 4S 5S 6S")
    t.do(c.ReportCutCard(DEVICE, "shoe"))
    t.draw(None)
    t.do(c.CorrectCard(BOSS, 0, card("AS"), "the pit boss says so"))  # a second ace of spades from a 1-deck shoe
    events = t.do(c.ContinuePlay(BOSS, "corrected"))
    assert events[-1] == e.ShoeEnded(
        shoe=1,
        rounds=1,
        voids=0,
        corrections=1,
        cards_dealt=4,
        cards_burned=6,
        cards_set_aside=0,
        composition_ok=False,
        composition_detail="more copies than the shoe holds: AS × 2",
    )


def test_the_cut_card_between_rounds_makes_the_next_round_the_last() -> None:
    t = dealing_table("4H KD 5S 2C")
    t.step(c.ReportCutCard(DEALER), [e.CutCardAppeared("dealer", 2)], last_round=2)
    assert isinstance(t.log[-2], e.RoundCompleted) and t.log[-2].last_hand is False
    t.open_and_close()
    for code in ["KH", "QD", "7S"]:
        t.draw(code)
    events = t.draw("7C")
    assert [type(event) for event in events] == [e.CardDealt, e.RoundCompleted, e.ShoeEnded]
    assert isinstance(events[1], e.RoundCompleted) and events[1].last_hand and events[1].round == 2
    assert t.state.phase is Phase.AWAITING_SHUFFLE


def test_one_more_hand_after_the_cut_card() -> None:
    t = dealing_table("4H KD", ProcedureConfig(one_more_hand=True))
    t.step(c.ReportCutCard(DEVICE, "shoe"), [e.CutCardAppeared("shoe", 2)], last_round=2)
    t.draw("5S")
    events = t.draw("2C")
    assert [type(event) for event in events] == [e.CardDealt, e.RoundCompleted]
    assert isinstance(events[1], e.RoundCompleted) and events[1].last_hand is False
    assert t.state.phase is Phase.READY
    t.open_and_close()
    for code in ["KH", "QD", "7S"]:
        t.draw(code)
    events = t.draw("7C")
    assert [type(event) for event in events] == [e.CardDealt, e.RoundCompleted, e.ShoeEnded]
    assert isinstance(events[1], e.RoundCompleted) and events[1].last_hand


def test_one_more_hand_after_a_void_with_no_error_burn() -> None:
    t = dealing_table("4H", ProcedureConfig(one_more_hand=True, burn_after_error=0))
    t.do(c.DeclareError(DEALER, "misdeal"))
    t.do(c.VoidRound(BOSS, "misdeal"))
    assert t.snap["suspension"] is None and t.state.phase is Phase.READY
    t.step(c.ReportCutCard(DEALER), [e.CutCardAppeared("dealer", 3)], last_round=3)


def test_the_cut_card_while_suspended_mid_round_makes_that_round_the_last() -> None:
    t = dealing_table("4H KD")
    t.do(c.DeclareError(DEALER, "card_exposed"))
    t.step(c.ReportCutCard(DEVICE, "shoe"), [e.CutCardAppeared("shoe", 1)], last_round=1)
    events = t.do(c.VoidRound(BOSS, "misdeal"))
    assert [type(event) for event in events] == [e.RoundVoided, e.TableResumed, e.ShoeEnded]
    assert isinstance(events[2], e.ShoeEnded) and (events[2].rounds, events[2].voids) == (0, 1)
    assert t.state.phase is Phase.AWAITING_SHUFFLE and t.state.burn is None


def test_after_the_shoe_ends_no_card_is_accepted_and_no_round_opens_until_a_new_shuffle_and_cut() -> None:
    t = dealing_table("4H KD 5S")
    t.do(c.ReportCutCard(DEVICE, "shoe"))
    t.draw("2C")
    assert t.state.phase is Phase.AWAITING_SHUFFLE
    t.refused(c.OpenBetting(DEALER))
    t.refused(c.ReportCutCard(DEVICE, "shoe"))
    read = t.read("9H")
    detail = "no card is due in phase awaiting_shuffle"
    t.step(
        c.DrawCard(DEVICE, read),
        [e.TableSuspended("card_not_due", detail, c.CardRead(card("9H"), SHOE, read.device_seq), game_id=t.game_id)],
        phase=Phase.SUSPENDED,
        suspension=suspension(SuspensionReason.CARD_NOT_DUE, detail, Phase.AWAITING_SHUFFLE, read),
        cards_drawn=t.snap["cards_drawn"] + 1,
        counts={**t.snap["counts"], "set_aside": 1},
    )
    t.refused(c.OpenBetting(DEALER))
    t.step(
        c.ContinuePlay(BOSS, "card put aside"),
        [e.PlayContinued(BOSS, "card put aside"), e.TableResumed(e.Resumption.CONTINUED)],
        phase=Phase.AWAITING_SHUFFLE,
        suspension=None,
    )
    t.refused(c.OpenBetting(DEALER))
    t.step(c.ConfirmShuffle(DEALER), [e.ShuffleConfirmed(2, DEALER)], phase=Phase.AWAITING_CUT, shoe=2)
    t.refused(c.OpenBetting(DEALER))
    t.draw("QH")  # not due before the cut either
    assert t.state.suspension is not None and t.state.suspension.resume is Phase.AWAITING_CUT
    t.do(c.ContinuePlay(BOSS, "card put aside"))
    assert t.state.phase is Phase.AWAITING_CUT
    t.step(
        c.PlaceCutCard(DEALER, 300),
        [e.CutCardPlaced(2, 300, 8), e.BurnRequired("shuffle", 6)],
        phase=Phase.BURNING,
        cut_position=300,
        burn=burn("shuffle", 6),
        cards_drawn=0,
        seen={},
        last_device_seq={},
        last_round=None,
        counts=counts(),
    )
    for code in BURNS.split():
        t.draw(code)
    t.do(c.OpenBetting(DEALER))
    assert t.state.round is not None and t.state.round.number == 2  # round numbers run on across shoes


# ---------------------------------------------------------------------------------------------------------------------
# Dealer changes.


def test_a_dealer_change_between_rounds_burns_one_card_before_the_next_round() -> None:
    t = dealing_table("4H KD 5S 2C")
    t.step(
        c.ChangeDealer(DEALER, "dealer:cid"),
        [e.DealerChanged("dealer:cid"), e.BurnRequired("dealer_change", 1)],
        dealer="dealer:cid",
        phase=Phase.BURNING,
        burn=burn("dealer_change", 1),
    )
    t.refused(c.OpenBetting("dealer:cid"))
    read = t.read("9S")
    t.step(
        c.DrawCard(DEVICE, read),
        [e.CardBurned(c.CardRead(card("9S"), SHOE, read.device_seq)), e.BurnCompleted("dealer_change")],
        **t.took(read),
        phase=Phase.READY,
        burn=None,
        counts=counts(burned=7, dealt=4, rounds=1),
    )
    assert [type(event) for event in t.do(c.OpenBetting("dealer:cid"))] == [e.BettingOpened]


def test_a_dealer_change_before_the_cut_needs_no_burn_of_its_own() -> None:
    t = Table()
    t.step(c.ChangeDealer("system:roster", "dealer:cid"), [e.DealerChanged("dealer:cid")], dealer="dealer:cid")
    t.step(c.ConfirmShuffle("dealer:cid"), [e.ShuffleConfirmed(1, "dealer:cid")], phase=Phase.AWAITING_CUT, shoe=1)
    t.step(c.ChangeDealer("dealer:cid", "dealer:dee"), [e.DealerChanged("dealer:dee")], dealer="dealer:dee")
    assert "name the dealer" in t.refused(c.ChangeDealer("dealer:dee", " ")).reason


@pytest.mark.parametrize("phase", [Phase.BURNING, Phase.BETTING_OPEN, Phase.DEALING, Phase.SUSPENDED])
def test_no_dealer_change_mid_play(phase: Phase) -> None:
    table_in(phase).refused(c.ChangeDealer(DEALER, "dealer:cid"))


# ---------------------------------------------------------------------------------------------------------------------
# The transition table, pair by pair.

COMMAND_TYPES = sorted(
    (cls for cls in vars(c).values() if isinstance(cls, type) and issubclass(cls, c.Command) and cls is not c.Command),
    key=lambda cls: cls.__name__,
)

# One command of each type, legal in the phase's representative state wherever the table lists the pair.
SAMPLES: dict[type[c.Command], c.Command] = {
    c.ConfirmShuffle: c.ConfirmShuffle(DEALER),
    c.PlaceCutCard: c.PlaceCutCard(DEALER),
    c.DrawCard: c.DrawCard(DEVICE, c.CardRead(Card.parse("9S"), SHOE, 1000)),
    c.ReportCutCard: c.ReportCutCard(DEVICE, "shoe"),
    c.OpenBetting: c.OpenBetting(DEALER),
    c.CloseBetting: c.CloseBetting(DEALER),
    c.ChangeDealer: c.ChangeDealer(DEALER, "dealer:cid"),
    c.DeclareError: c.DeclareError(DEALER, "card_exposed"),
    c.ReportSourceFailure: c.ReportSourceFailure("system:supervisor", SHOE, "cable"),
    c.ReportDisagreement: c.ReportDisagreement("system:supervisor", "shoe and camera differ"),
    c.CorrectCard: c.CorrectCard(BOSS, 0, Card.parse("QH"), "read by hand"),
    c.ContinuePlay: c.ContinuePlay(BOSS, "resolved"),
    c.VoidRound: c.VoidRound(BOSS, "misdeal"),
    c.CloseTable: c.CloseTable(BOSS, "end of the session"),
    c.OpenTable: c.OpenTable(BOSS),
    c.OrderShuffle: c.OrderShuffle(BOSS, "cards suspected marked"),
    c.InspectDecks: c.InspectDecks(BOSS, DEALER),
    c.ReplaceDeck: c.ReplaceDeck(BOSS, "3", "7H bent"),
    c.TakeSeat: c.TakeSeat(GAME, "p2", "Bea", 2),
    c.ChangeSeat: c.ChangeSeat(GAME, "p2", 3),
    c.LeaveSeat: c.LeaveSeat(GAME, "p2"),
    c.PassRound: c.PassRound(GAME, "p1"),
}
SEATED = ProcedureConfig(seats=5)


def table_in(phase: Phase, config: ProcedureConfig | None = None, *first: c.Command) -> Table:
    """A representative table in `phase` (suspended: mid-round, on an unreadable card), `first` applied at its
    start."""
    t = Table(config)
    for command in first:
        t.do(command)
    if phase is not Phase.AWAITING_SHUFFLE:
        t.do(c.ConfirmShuffle(DEALER))
    if phase not in (Phase.AWAITING_SHUFFLE, Phase.AWAITING_CUT):
        t.do(c.PlaceCutCard(DEALER))
    if phase not in (Phase.AWAITING_SHUFFLE, Phase.AWAITING_CUT, Phase.BURNING):
        for code in BURNS.split():
            t.draw(code)
    if phase is Phase.CLOSED:
        t.do(c.CloseTable(BOSS, "end of the session"))
    if phase in (Phase.BETTING_OPEN, Phase.DEALING, Phase.SUSPENDED):
        t.do(c.OpenBetting(DEALER))
    if phase in (Phase.DEALING, Phase.SUSPENDED):
        t.clock.advance(t.state.config.betting_seconds)
        t.do(c.CloseBetting(DEALER))
        t.draw("2H")
        t.draw("6D")
    if phase is Phase.SUSPENDED:
        t.draw(None)  # unreadable: the table waits for the pit boss
    assert t.state.phase is phase
    return t


def seat_sample_table(phase: Phase, cls: type[c.Command]) -> Table:
    """A table with seats in `phase` where the sample seat command is legal: p1 seated from the start (a pass is
    theirs), p2 seated just now (a change or a leave is theirs: seated mid-round, they have no part in the round)."""
    t = table_in(phase, SEATED, c.TakeSeat(GAME, "p1", "Ann", 1))
    if cls in (c.ChangeSeat, c.LeaveSeat):
        t.do(c.TakeSeat(GAME, "p2", "Bea", 2))
    return t


SEAT_COMMANDS = (c.TakeSeat, c.ChangeSeat, c.LeaveSeat, c.PassRound)
LEGAL = [(phase, cls) for phase, row in TRANSITIONS.items() for cls in row]
ILLEGAL = [(phase, cls) for phase in Phase for cls in COMMAND_TYPES if cls not in TRANSITIONS[phase]]


def pair_id(pair: tuple[Phase, type[c.Command]]) -> str:
    return f"{pair[0].value}-{pair[1].__name__}"


def test_the_table_names_every_phase_and_only_known_commands() -> None:
    assert set(TRANSITIONS) == set(Phase)
    assert set(SAMPLES) == set(COMMAND_TYPES)
    assert all(cls in COMMAND_TYPES for row in TRANSITIONS.values() for cls in row)
    assert len(LEGAL) + len(ILLEGAL) == len(Phase) * len(COMMAND_TYPES)


INSPECTING = ProcedureConfig(inspect_decks=True)


@pytest.mark.parametrize("pair", LEGAL, ids=pair_id)
def test_every_move_in_the_table_is_accepted(pair: tuple[Phase, type[c.Command]]) -> None:
    phase, cls = pair
    t = Table(INSPECTING) if cls in (c.InspectDecks, c.ReplaceDeck) else table_in(phase)  # an inspection is due
    if cls in SEAT_COMMANDS:
        t = seat_sample_table(phase, cls)
    if cls is not c.PassRound:  # a pass is made while the betting timer runs
        t.clock.advance(60)  # past any betting timer
    events = t.do(SAMPLES[cls])
    assert events or pair == (Phase.READY, c.ReportSourceFailure)  # a failed source between rounds logs nothing


@pytest.mark.parametrize("pair", ILLEGAL, ids=pair_id)
def test_every_move_outside_the_table_is_refused_and_changes_nothing(pair: tuple[Phase, type[c.Command]]) -> None:
    phase, cls = pair
    t = table_in(phase)
    t.clock.advance(60)
    assert t.refused(SAMPLES[cls]).reason == "not allowed now"


def test_a_pit_boss_closes_the_table_between_rounds_and_opens_it_where_it_was() -> None:
    t = ready_table()
    with pytest.raises(ProcedureError, match="only a pit boss"):
        decide(t.state, c.CloseTable(DEALER, "break"), t.clock.now())
    assert t.do(c.CloseTable(BOSS, "end of the session")) == [e.TableClosed("end of the session", BOSS, "ready")]
    assert t.state.phase is Phase.CLOSED
    assert t.refused(c.OpenBetting(DEALER)).reason == "not allowed now"
    # A card that comes out while closed suspends the table; once resolved it stays closed, with no burn.
    t.do(c.DrawCard(DEVICE, c.CardRead(Card.parse("5D"), SHOE, 2000)))
    assert t.state.phase is Phase.SUSPENDED
    assert [type(event) for event in t.do(c.ContinuePlay(BOSS, "stray card"))] == [e.PlayContinued, e.TableResumed]
    assert t.state.phase is Phase.CLOSED
    assert t.do(c.OpenTable(BOSS)) == [e.TableOpened(BOSS)]
    assert t.state.phase is Phase.READY and t.state.reopens_in is None


def test_the_table_names_every_phase_and_where_each_move_leads() -> None:
    assert set(TRANSITIONS) == set(Phase)
    for phase, moves in TRANSITIONS.items():
        for command, move in moves.items():
            assert move.leads_to, f"{phase} × {command.__name__} leads nowhere"
            assert move.leads_to <= set(Phase)
    # A card read means something else in each phase, and each meaning has a handler of its own.
    meanings = {phase: TRANSITIONS[phase][c.DrawCard].handler.__name__ for phase in Phase}
    assert meanings == {
        Phase.AWAITING_SHUFFLE: "_card_not_due", Phase.AWAITING_CUT: "_card_not_due", Phase.READY: "_card_not_due",
        Phase.CLOSED: "_card_not_due", Phase.BURNING: "_burn_read", Phase.DEALING: "_deal_read",
        Phase.BETTING_OPEN: "_card_while_betting", Phase.SUSPENDED: "_card_while_suspended",
    }  # fmt: skip


def test_the_burn_numbers_are_the_configured_ones() -> None:
    config = ProcedureConfig(burn_after_shuffle=6, burn_after_error=3, burn_after_dealer_change=1)
    assert [burn_count(reason, config) for reason in BurnReason] == [6, 3, 1]
    assert BurnReason.SHUFFLE == "shuffle"  # the log's text


@pytest.mark.parametrize(
    ("first_session", "second_session", "suspends"),
    [
        ("boot-0000002a", "boot-0000002a", True),  # a repeat within one boot of the shoe
        ("boot-0000002a", "boot-0000002b", False),  # the shoe power-cycled: its numbers start over, no duplicate
        (None, "boot-0000002b", False),  # the first read with a session starts that session
    ],
)
def test_a_device_sequence_counts_within_its_session(
    first_session: str | None, second_session: str, suspends: bool
) -> None:
    t = dealing_table()
    first = dataclasses.replace(t.read("2H", seq=1), device_session=first_session)
    t.do(c.DrawCard(DEVICE, first))
    assert dict(t.state.device_sessions) == ({SHOE: first_session} if first_session else {})
    again = dataclasses.replace(t.read("3D", seq=1), device_session=second_session)
    kinds = [type(event) for event in t.do(c.DrawCard(DEVICE, again))]
    assert kinds == ([e.TableSuspended] if suspends else [e.CardDealt])
    if not suspends:
        assert dict(t.state.device_sessions) == {SHOE: second_session}
        assert dict(t.state.last_device_seq) == {SHOE: 1}


def test_a_read_logs_its_session_and_a_read_without_one_logs_as_before() -> None:
    read = c.CardRead(card("QH"), SHOE, 3, 1.0, "0203", device_session="boot-0000002a")
    kind, data, raw = e.encode(e.CardBurned(read))
    assert data["device_session"] == "boot-0000002a" and e.decode(kind, data, raw) == e.CardBurned(read)
    _, plain, _ = e.encode(e.CardBurned(dataclasses.replace(read, device_session=None)))
    assert "device_session" not in plain


# ---------------------------------------------------------------------------------------------------------------------
# Early shuffle (seed 000 §3.2.3) and deck inspection (§1.3.3, §3.1).

INSPECTING_TABLE = ProcedureConfig(inspect_decks=True, burn_after_shuffle=0)


def shoe_summary(reason: e.ShoeEndReason, **changes: Any) -> e.ShoeEnded:
    """The summary of the first shoe after one natural round (6 burned, 4 dealt)."""
    summary = e.ShoeEnded(
        shoe=1, rounds=1, voids=0, corrections=0, cards_dealt=4, cards_burned=6, cards_set_aside=0,
        composition_ok=True, composition_detail="10 cards out of 416, no card over 8", reason=reason,
    )  # fmt: skip
    return dataclasses.replace(summary, **changes)


def test_a_pit_boss_orders_an_early_shuffle_after_a_completed_round() -> None:
    t = dealing_table("4H KD 5S 2C")
    assert t.state.phase is Phase.READY and t.state.counts.rounds == 1
    t.step(
        c.OrderShuffle(BOSS, "cards suspected marked"),
        [e.ShuffleOrdered(1, "cards suspected marked", BOSS), shoe_summary(e.ShoeEndReason.EARLY_SHUFFLE)],
        phase=Phase.AWAITING_SHUFFLE,
        cut_position=None,
    )
    t.refused(c.OpenBetting(DEALER))
    t.refused(c.OrderShuffle(BOSS, "again"))
    t.step(c.ConfirmShuffle(DEALER), [e.ShuffleConfirmed(2, DEALER)], phase=Phase.AWAITING_CUT, shoe=2)


def test_the_normal_end_of_a_shoe_is_the_cut_card() -> None:
    t = dealing_table("4H KD 5S")
    t.do(c.ReportCutCard(DEVICE, "shoe"))
    events = t.draw("2C")
    assert events[-1] == shoe_summary(e.ShoeEndReason.CUT_CARD)
    assert e.ShoeEndReason.CUT_CARD == "cut_card" and e.ShoeEndReason.EARLY_SHUFFLE == "early_shuffle"  # the log's


def test_a_shoe_end_logs_its_reason_and_an_older_record_without_one_means_the_cut_card() -> None:
    early = shoe_summary(e.ShoeEndReason.EARLY_SHUFFLE)
    kind, data, raw = e.encode(early)
    assert data["reason"] == "early_shuffle" and e.decode(kind, data, raw) == early
    older = {name: value for name, value in data.items() if name != "reason"}  # logged before the field existed
    assert e.decode(kind, older) == shoe_summary(e.ShoeEndReason.CUT_CARD)
    with pytest.raises(e.EventDecodeError):
        e.decode(kind, {**data, "reason": "tired"})


def test_only_a_pit_boss_orders_an_early_shuffle_and_with_a_reason() -> None:
    t = dealing_table("4H KD 5S 2C")
    assert t.refused(c.OrderShuffle(DEALER, "the dealer wants one")).reason.startswith("only a pit boss may decide")
    assert t.refused(c.OrderShuffle("device:shoe-1", "x")).reason.startswith("only a pit boss may decide")
    assert t.refused(c.OrderShuffle(BOSS, "   ")).reason == "an early shuffle needs a reason"
    t.do(c.ChangeDealer(DEALER, "bob"))  # the pit boss bob deals now: he may not order his own table's shuffle
    t.draw("9D")
    assert (
        t.refused(c.OrderShuffle(BOSS, "x")).reason == "the dealer on duty cannot resolve an error at their own table"
    )


def test_a_table_may_not_allow_an_early_shuffle() -> None:
    t = dealing_table("4H KD 5S 2C", ProcedureConfig(allow_early_shuffle=False))
    error = t.refused(c.OrderShuffle(BOSS, "cards suspected marked"))
    assert error.reason == "this table does not allow an early shuffle (procedure.allow_early_shuffle)"


@pytest.mark.parametrize("phase", [Phase.BURNING, Phase.BETTING_OPEN, Phase.DEALING, Phase.SUSPENDED, Phase.CLOSED])
def test_no_early_shuffle_but_between_rounds(phase: Phase) -> None:
    assert table_in(phase).refused(c.OrderShuffle(BOSS, "cards suspected marked")).reason == "not allowed now"


def test_the_decks_are_inspected_before_the_first_shuffle_naming_the_dealer_and_the_pit_boss() -> None:
    t = Table(INSPECTING_TABLE)
    error = t.refused(c.ConfirmShuffle(DEALER))
    assert error.reason == "inspect the decks of shoe 1 first: a pit boss approves the inspection"
    assert t.refused(c.InspectDecks(BOSS)).reason == (
        "name the dealer who inspected the decks: no dealer is on duty at this table"
    )
    t.step(
        c.InspectDecks(BOSS, "ann"),
        [e.DecksInspected(1, e.InspectionStage.START, 8, DEALER, BOSS)],
        start_inspected=1,
    )
    assert t.refused(c.InspectDecks(BOSS, "ann")).reason == "the decks of shoe 1 are inspected already: shuffle them"
    assert (
        t.refused(c.ReplaceDeck(BOSS, "3", "bent")).reason == "the decks of shoe 1 are inspected already: shuffle them"
    )
    t.step(c.ConfirmShuffle(DEALER), [e.ShuffleConfirmed(1, DEALER)], phase=Phase.AWAITING_CUT, shoe=1, dealer=DEALER)


def test_at_the_end_of_a_shoe_its_decks_are_inspected_then_the_next_shoes() -> None:
    t = Table(INSPECTING_TABLE)
    t.do(c.InspectDecks(BOSS, DEALER))
    t.do(c.ConfirmShuffle(DEALER))
    t.do(c.PlaceCutCard(DEALER))
    t.open_and_close()
    t.do(c.ReportCutCard(DEVICE, "shoe"))
    for code in ["4H", "KD", "5S", "2C"]:
        t.draw(code)
    assert isinstance(t.log[-1], e.ShoeEnded) and t.state.phase is Phase.AWAITING_SHUFFLE
    error = t.refused(c.ConfirmShuffle(DEALER))
    assert error.reason == "inspect the decks of shoe 1, which has ended, first: a pit boss approves the inspection"
    t.step(  # the dealer on duty, by default
        c.InspectDecks(BOSS),
        [e.DecksInspected(1, e.InspectionStage.END, 8, DEALER, BOSS)],
        end_inspected=1,
    )
    assert t.refused(c.ConfirmShuffle(DEALER)).reason == (
        "inspect the decks of shoe 2 first: a pit boss approves the inspection"
    )
    t.step(
        c.InspectDecks("pit_boss:cid", "dealer:dee"),
        [e.DecksInspected(2, e.InspectionStage.START, 8, "dealer:dee", "pit_boss:cid")],
        start_inspected=2,
    )
    t.step(c.ConfirmShuffle(DEALER), [e.ShuffleConfirmed(2, DEALER)], phase=Phase.AWAITING_CUT, shoe=2)


def test_an_early_shuffle_at_a_table_that_inspects_calls_for_the_inspections() -> None:
    t = Table(INSPECTING_TABLE)
    t.do(c.InspectDecks(BOSS, DEALER))
    t.do(c.ConfirmShuffle(DEALER))
    t.do(c.PlaceCutCard(DEALER))
    t.do(c.OrderShuffle(BOSS, "suspected marked card"))
    assert t.state.phase is Phase.AWAITING_SHUFFLE
    assert t.refused(c.ConfirmShuffle(DEALER)).reason.startswith("inspect the decks of shoe 1, which has ended")
    kinds = [type(event) for event in t.do(c.InspectDecks(BOSS)) + t.do(c.InspectDecks(BOSS))]
    assert kinds == [e.DecksInspected, e.DecksInspected]
    assert (t.state.end_inspected, t.state.start_inspected) == (1, 2)


def test_a_pit_boss_replaces_a_defective_deck_during_an_inspection() -> None:
    t = Table(INSPECTING_TABLE)
    t.step(
        c.ReplaceDeck(BOSS, " 3 ", "7H marked on the back"),
        [e.DeckReplaced(1, e.InspectionStage.START, "3", "7H marked on the back", BOSS)],
    )
    assert t.refused(c.ReplaceDeck(BOSS, "  ", "bent")).reason == "name the deck replaced"
    assert t.refused(c.ReplaceDeck(BOSS, "3", " ")).reason == "replacing a deck needs a reason: its defect"
    assert t.refused(c.ReplaceDeck(DEALER, "3", "bent")).reason.startswith("only a pit boss may decide")
    t.refused(c.ConfirmShuffle(DEALER))  # the replaced deck is inspected with the others before the shuffle
    t.do(c.InspectDecks(BOSS, "ann"))
    t.do(c.ConfirmShuffle(DEALER))


@pytest.mark.parametrize(
    ("actor", "dealer", "reason"),
    [
        (DEALER, "ann", "only a pit boss may decide, not dealer:ann"),
        ("admin:root", "ann", "only a pit boss may decide, not admin:root"),
        (BOSS, "bob", "the dealer who inspected the decks cannot approve the inspection"),
        (BOSS, BOSS, "pit_boss:bob is not a dealer: name the dealer who inspected the decks"),
        (BOSS, "surveillance:sue", "surveillance:sue is not a dealer: name the dealer who inspected the decks"),
        (BOSS, "croupier:ann", "name the dealer who inspected the decks (a name, or dealer:name)"),
        (BOSS, "  ", "name the dealer who inspected the decks: no dealer is on duty at this table"),
    ],
)
def test_who_inspects_and_who_approves(actor: str, dealer: str, reason: str) -> None:
    assert Table(INSPECTING_TABLE).refused(c.InspectDecks(actor, dealer)).reason == reason


def test_the_dealer_on_duty_who_is_a_pit_boss_needs_another_to_approve() -> None:
    t = Table(INSPECTING_TABLE)
    t.do(c.ChangeDealer("system:roster", "bob"))
    error = t.refused(c.InspectDecks(BOSS))
    assert error.reason == "the dealer on duty cannot resolve an error at their own table"
    assert t.do(c.InspectDecks("pit_boss:cid")) == [e.DecksInspected(1, e.InspectionStage.START, 8, "dealer:bob",
                                                                       "pit_boss:cid")]  # fmt: skip


def test_a_table_that_inspects_elsewhere_records_no_inspection_and_shuffles_at_once() -> None:
    t = Table()
    reason = "this table does not record deck inspections (procedure.inspect_decks)"
    assert t.refused(c.InspectDecks(BOSS, "ann")).reason == reason
    assert t.refused(c.ReplaceDeck(BOSS, "3", "bent")).reason == reason
    assert [type(event) for event in t.do(c.ConfirmShuffle(DEALER))] == [e.ShuffleConfirmed]


@pytest.mark.parametrize(
    "event",
    [
        e.ShuffleOrdered(4, "suspected marked card", BOSS),
        e.DecksInspected(4, e.InspectionStage.END, 8, DEALER, BOSS),
        e.DeckReplaced(5, e.InspectionStage.START, "red-0412", "two 7H", BOSS),
        e.BettingReopened(3, "T7-20260314-150926-0003", T0 + timedelta(seconds=15)),
    ],
)
def test_the_new_procedure_records_decode_to_themselves(event: e.Event) -> None:
    kind, data, raw = e.encode(event)
    assert raw is None and e.decode(kind, data) == event


# ---------------------------------------------------------------------------------------------------------------------
# Seats (seed 004): taken, changed and left between rounds; a player joining mid-round waits for the next; a seated
# player passes or sits the round out; only seated, active players bet at a table with seats.

OTHER_SERVER = "game_server:operator-2"


def seated_table(*players: tuple[str, str, int]) -> Table:
    """A ready table with five seats and these players (id, nickname, seat) seated between rounds."""
    t = ready_table(SEATED)
    for player, nickname, number in players:
        t.do(c.TakeSeat(GAME, player, nickname, number))
    return t


def seat(number: int, player: str, nickname: str, first_round: int = 1, passed: int = 0, sat_out: int = 0) -> Seat:
    return Seat(number, player, "operator-1", nickname, first_round, passed, sat_out)


def test_a_seat_is_taken_by_a_game_server_for_its_player_between_rounds() -> None:
    t = ready_table(SEATED)
    t.step(c.TakeSeat(GAME, "p1", "  Ann ", 3), [e.SeatTaken(3, "p1", "operator-1", "Ann", 1)],
           seats=(seat(3, "p1", "Ann"),))  # fmt: skip
    # No seat named: the first free one.
    t.step(c.TakeSeat(GAME, "p2", "Bea"), [e.SeatTaken(1, "p2", "operator-1", "Bea", 1)],
           seats=(seat(1, "p2", "Bea"), seat(3, "p1", "Ann")))  # fmt: skip
    assert seats_view(t.state) == [
        {"seat": 1, "nickname": "Bea", "status": "seated"}, {"seat": 2, "nickname": None, "status": "free"},
        {"seat": 3, "nickname": "Ann", "status": "seated"}, {"seat": 4, "nickname": None, "status": "free"},
        {"seat": 5, "nickname": None, "status": "free"},
    ]  # fmt: skip
    assert t.state.phase is Phase.READY


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        (c.TakeSeat(GAME, "p9", "Cid", 3), "seat 3 is taken"),
        (c.TakeSeat(GAME, "p9", "Cid", 6), "seat 6 does not exist: this table has seats 1 to 5"),
        (c.TakeSeat(GAME, "p1", "Ann2", 4), "p1 sits in seat 3 already: change seats instead"),
        (c.TakeSeat(GAME, "p9", "ANN", 4), "the nickname 'ANN' is in use at this table"),
        (c.TakeSeat(GAME, "p9", " \x00 ", 4), "a nickname is 1 to 32 printable characters"),
        (c.TakeSeat(GAME, "p9", "x" * 33, 4), "a nickname is 1 to 32 printable characters"),
        (c.TakeSeat(GAME, " ", "Cid", 4), "name the player taking the seat"),
        (c.TakeSeat(DEALER, "p9", "Cid", 4), "players are seated by their game server, not by dealer:ann"),
        (c.ChangeSeat(GAME, "p1", 0), "seat 0 does not exist: this table has seats 1 to 5"),
        (c.ChangeSeat(GAME, "p9", 4), "p9 has no seat at this table"),
        (c.ChangeSeat(OTHER_SERVER, "p1", 4), "p1 was seated by another game server"),
        (c.LeaveSeat(OTHER_SERVER, "p1"), "p1 was seated by another game server"),
        (c.LeaveSeat(BOSS, "p1"), "players are seated by their game server, not by pit_boss:bob"),
    ],
)
def test_a_seat_command_that_breaks_a_rule_is_refused_with_its_reason(command: c.Command, reason: str) -> None:
    t = seated_table(("p1", "Ann", 3))
    assert t.refused(command).reason == reason


def test_every_seat_taken_refuses_one_more() -> None:
    t = seated_table(*((f"p{n}", f"N{n}", n) for n in range(1, 6)))
    assert t.refused(c.TakeSeat(GAME, "p6", "N6")).reason == "every seat of this table is taken (5 seats)"


def test_a_table_without_seats_has_none_to_take_and_takes_anyones_bets() -> None:
    t = ready_table()
    assert t.refused(c.TakeSeat(GAME, "p1", "Ann")).reason == "this table has no seats (table.seats)"
    t.do(c.OpenBetting(DEALER))
    assert bet_refusal(t.state, "p1") is None and seats_view(t.state) is None
    t.clock.advance(15)
    assert t.do(c.CloseBetting(DEALER, frozenset())) == [e.BettingClosed(1, t.game_id or "", False)]  # no sit-out


def test_seats_change_and_are_left_between_rounds() -> None:
    t = seated_table(("p1", "Ann", 3), ("p2", "Bea", 1))
    t.step(c.ChangeSeat(GAME, "p1", 5), [e.SeatChanged(3, 5, "p1", "Ann")],
           seats=(seat(1, "p2", "Bea"), seat(5, "p1", "Ann")))  # fmt: skip
    t.step(c.ChangeSeat(GAME, "p1", 5), [])  # sits there already: a retry changes nothing
    assert t.refused(c.ChangeSeat(GAME, "p1", 1)).reason == "seat 1 is taken"
    t.step(c.LeaveSeat(GAME, "p2"), [e.SeatLeft(1, "p2", "Bea")], seats=(seat(5, "p1", "Ann"),))
    # A seat is also left while the table is closed or between shoes.
    t.do(c.CloseTable(BOSS, "break"))
    t.step(c.LeaveSeat(GAME, "p1"), [e.SeatLeft(5, "p1", "Ann")], seats=())


@pytest.mark.parametrize("phase", [Phase.BETTING_OPEN, Phase.DEALING, Phase.SUSPENDED])
def test_a_player_in_the_round_keeps_their_seat_until_it_ends(phase: Phase) -> None:
    t = table_in(phase, SEATED, c.TakeSeat(GAME, "p1", "Ann", 1))
    bettors = frozenset({"p1"})
    if phase is not Phase.BETTING_OPEN:  # p1 bet: they play the round
        t = Table(SEATED)
        t.do(c.TakeSeat(GAME, "p1", "Ann", 1))
        t.do(c.ConfirmShuffle(DEALER))
        t.do(c.PlaceCutCard(DEALER))
        for code in BURNS.split():
            t.draw(code)
        t.do(c.OpenBetting(DEALER))
        t.clock.advance(15)
        t.do(c.CloseBetting(DEALER, bettors))
        t.draw("2H")
        if phase is Phase.SUSPENDED:
            t.draw(None)
    assert t.state.phase is phase
    reason = "p1 plays round 1, under way: seats change only between rounds (once its result or void is in)"
    assert t.refused(c.LeaveSeat(GAME, "p1")).reason == reason
    assert t.refused(c.ChangeSeat(GAME, "p1", 2)).reason == reason
    assert seat_status(t.state, t.state.seats[0]) == ("betting" if phase is Phase.BETTING_OPEN else "playing")


def test_the_seat_is_free_again_once_the_round_ends() -> None:
    t = seated_table(("p1", "Ann", 1))
    t.do(c.OpenBetting(DEALER))
    t.clock.advance(15)
    t.do(c.CloseBetting(DEALER, frozenset({"p1"})))
    for code in ["9H", "2S", "KD", "3C"]:
        t.draw(code)
    assert t.state.phase is Phase.READY
    assert t.do(c.LeaveSeat(GAME, "p1")) == [e.SeatLeft(1, "p1", "Ann")]


def test_a_player_who_joins_mid_round_waits_for_the_next() -> None:
    t = seated_table(("p1", "Ann", 1))
    t.do(c.OpenBetting(DEALER))
    gid = t.game_id or ""
    t.step(c.TakeSeat(GAME, "p2", "Bea", 2), [e.SeatTaken(2, "p2", "operator-1", "Bea", 2)],
           seats=(seat(1, "p1", "Ann"), seat(2, "p2", "Bea", first_round=2)))  # fmt: skip
    assert [s["status"] for s in seats_view(t.state) or []] == ["betting", "waiting", "free", "free", "free"]
    assert bet_refusal(t.state, "p2") == "p2 took seat 2 during round 1: they bet from round 2"
    assert bet_refusal(t.state, "p1") is None
    assert bet_refusal(t.state, "p9") == "only a seated player bets at this table: p9 has no seat"
    assert t.refused(c.PassRound(GAME, "p2")).reason == "p2 took their seat during round 1: they play from round 2"
    # Not in the round: p2 may change seats, and does not sit it out.
    assert t.do(c.ChangeSeat(GAME, "p2", 4)) == [e.SeatChanged(2, 4, "p2", "Bea")]
    t.clock.advance(15)
    t.step(c.CloseBetting(DEALER, frozenset({"p1"})), [e.BettingClosed(1, gid, False)], phase=Phase.DEALING)
    for code in ["9H", "2S", "KD", "3C"]:
        t.draw(code)
    t.do(c.OpenBetting(DEALER))
    assert [s["status"] for s in seats_view(t.state) or []] == ["betting", "free", "free", "betting", "free"]
    assert bet_refusal(t.state, "p2") is None


def test_a_seated_player_passes_a_round_while_betting_is_open() -> None:
    t = seated_table(("p1", "Ann", 1), ("p2", "Bea", 2))
    assert t.refused(c.PassRound(GAME, "p1")).reason == "not allowed now"  # no round in betting
    t.do(c.OpenBetting(DEALER))
    gid = t.game_id or ""
    with_bets = t.refused(c.PassRound(GAME, "p1", open_bets=2))
    assert with_bets.reason == "p1 has 2 open bet(s) in round 1: undo them to pass"
    assert t.refused(c.PassRound(OTHER_SERVER, "p1")).reason == "p1 was seated by another game server"
    t.step(c.PassRound(GAME, "p1"), [e.RoundPassed(1, gid, 1, "p1", "Ann")],
           seats=(seat(1, "p1", "Ann", passed=1), seat(2, "p2", "Bea")))  # fmt: skip
    t.step(c.PassRound(GAME, "p1"), [])  # a retry changes nothing
    assert bet_refusal(t.state, "p1") == "p1 passed round 1"
    # Having passed, p1 has no part in the round: they may leave at once.
    assert t.do(c.LeaveSeat(GAME, "p1")) == [e.SeatLeft(1, "p1", "Ann")]
    t.clock.advance(15)
    assert t.refused(c.PassRound(GAME, "p2")).reason == "betting time is over: too late to pass round 1"


def test_who_neither_bets_nor_passes_before_betting_closes_sits_the_round_out() -> None:
    t = seated_table(("p1", "Ann", 1), ("p2", "Bea", 2), ("p3", "Cid", 4))
    t.do(c.OpenBetting(DEALER))
    gid = t.game_id or ""
    t.do(c.PassRound(GAME, "p2"))
    t.clock.advance(15)
    t.step(
        c.CloseBetting(DEALER, frozenset({"p1", "p9"})),  # p9 bet without a seat (before seats): no matter
        [e.BettingClosed(1, gid, False), e.PlayerSatOut(1, gid, 4, "p3", "Cid")],
        phase=Phase.DEALING,
        seats=(seat(1, "p1", "Ann"), seat(2, "p2", "Bea", passed=1), seat(4, "p3", "Cid", sat_out=1)),
    )
    assert [s["status"] for s in seats_view(t.state) or []] == ["playing", "passed", "free", "sat_out", "free"]
    # Out of the round, p3 may leave at once; p1, who plays it, may not.
    assert t.do(c.LeaveSeat(GAME, "p3")) == [e.SeatLeft(4, "p3", "Cid")]
    t.refused(c.LeaveSeat(GAME, "p1"))
    # Nobody known to have bet: every active player who did not pass sits out.
    t2 = seated_table(("p1", "Ann", 1))
    t2.do(c.OpenBetting(DEALER))
    t2.clock.advance(15)
    assert t2.do(c.CloseBetting(DEALER))[1:] == [e.PlayerSatOut(1, t2.game_id or "", 1, "p1", "Ann")]


def test_seat_events_go_through_the_log_and_back() -> None:
    for event in (
        e.SeatTaken(2, "p1", "operator-1", "Ann", 7),
        e.SeatChanged(2, 5, "p1", "Ann"),
        e.SeatLeft(5, "p1", "Ann"),
        e.RoundPassed(7, "T7-x-0007", 5, "p1", "Ann"),
        e.PlayerSatOut(7, "T7-x-0007", 5, "p1", "Ann"),
    ):
        kind, data, raw = e.encode(event)
        assert e.decode(kind, data, raw) == event
    # Replayed, the events give the state they gave live.
    t = seated_table(("p1", "Ann", 1), ("p2", "Bea", 2))
    t.do(c.OpenBetting(DEALER))
    t.do(c.TakeSeat(GAME, "p3", "Cid", 3))
    t.do(c.PassRound(GAME, "p2"))
    t.clock.advance(15)
    t.do(c.CloseBetting(DEALER, frozenset()))
    replayed = TableState(TABLE, SEATED)
    for event in t.log:
        kind, data, raw = e.encode(event)
        replayed = evolve(replayed, e.decode(kind, data, raw))
    assert replayed == t.state
