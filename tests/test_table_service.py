"""The table service (studio/table_service.py) over the in-memory store and a manual clock: the log is written before
anything is published, nothing is published while the table waits for a pit boss, a refused command logs nothing, and
a service started on an existing log resumes exactly where the live one stood."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from studio.clock import ManualClock
from studio.domain import commands as c
from studio.domain import events as e
from studio.domain.cards import Card
from studio.domain.errors import ProcedureError
from studio.domain.procedure import Phase
from studio.domain.procedure_config import ProcedureConfig
from studio.domain.records import Record
from studio.domain.rules import Side
from studio.simulation import seeded_shoe
from studio.store_memory import MemoryEventStore
from studio.table_service import TableService

T0 = datetime(2026, 3, 14, 15, 9, 26, tzinfo=UTC)
TABLE = "T7"
DEALER = "dealer:ann"
BOSS = "pit_boss:bob"
DEVICE = "device:shoe-1"


class CheckingPublisher:
    """Records what it is handed, checking each time that the store already holds exactly those records and that
    nothing but the suspension itself is published while the table is suspended."""

    def __init__(self, store: MemoryEventStore) -> None:
        self.store = store
        self.service: TableService | None = None
        self.calls: list[list[Record]] = []

    @property
    def published(self) -> list[Record]:
        return [record for call in self.calls for record in call]

    def publish(self, records: Sequence[Record]) -> None:
        logged = {record.seq: record for record in self.store.read(TABLE)}
        for record in records:
            assert logged.get(record.seq) == record, f"record {record.seq} published before it was logged"
        assert self.service is not None
        if self.service.state.suspended:  # the suspension goes out at once (`table_suspended`), the rest waits
            assert records[-1].kind == "TableSuspended", "published while suspended"
        seqs = [record.seq for record in records]
        first = self.published[-1].seq + 1 if self.calls else 1
        assert seqs == list(range(first, first + len(records))), "published out of order or with a gap"
        self.calls.append(list(records))


class Studio:
    def __init__(self, config: ProcedureConfig | None = None) -> None:
        self.config = config or ProcedureConfig()
        self.store = MemoryEventStore()
        self.clock = ManualClock(T0)
        self.publisher = CheckingPublisher(self.store)
        self.service = TableService(TABLE, self.store, self.clock, self.config, self.publisher)
        self.publisher.service = self.service
        self.device_seq = 0

    def handle(self, command: c.Command) -> list[e.Event]:
        before = self.store.last_seq(TABLE)
        self.service.handle(command)
        return [e.decode(r.kind, r.data, r.raw) for r in self.store.read(TABLE, after=before)]

    def draw(self, code: str | None) -> list[e.Event]:
        self.device_seq += 1
        read = c.CardRead(None if code is None else Card.parse(code), "shoe-1", self.device_seq, 0.99, f"raw-{code}")
        self.clock.advance(2)
        return self.handle(c.DrawCard(DEVICE, read))

    def events(self) -> list[e.Event]:
        return [e.decode(r.kind, r.data, r.raw) for r in self.store.read(TABLE)]

    def restarted(self) -> TableService:
        return TableService(TABLE, self.store, self.clock, self.config)

    def ready(self) -> None:
        self.handle(c.ConfirmShuffle(DEALER))
        self.handle(c.PlaceCutCard(DEALER))
        for code in ["2C", "3C", "4C", "5C", "6C", "7C"]:
            self.draw(code)
        assert self.service.state.phase is Phase.READY

    def open_and_close(self) -> None:
        self.handle(c.OpenBetting(DEALER))
        self.clock.advance(self.config.betting_seconds)
        self.handle(c.CloseBetting(DEALER))


def test_every_record_is_logged_before_it_is_published_and_all_are_published_in_order() -> None:
    studio = Studio()
    studio.ready()
    studio.open_and_close()
    for code in ["2H", "6D", "3S", "KC", "9C"]:
        studio.draw(code)
    assert isinstance(studio.events()[-1], e.RoundCompleted)
    assert [record.seq for record in studio.publisher.published] == list(range(1, studio.store.last_seq(TABLE) + 1))
    assert studio.publisher.published == list(studio.store.read(TABLE))
    assert studio.service.seq == studio.store.last_seq(TABLE)


@pytest.mark.parametrize("resolution", ["continue", "void"])
def test_the_suspension_is_published_at_once_then_the_held_records_follow_in_order(resolution: str) -> None:
    studio = Studio()
    studio.ready()
    studio.open_and_close()
    studio.draw("2H")
    published = len(studio.publisher.published)
    assert published == studio.store.last_seq(TABLE)
    calls = len(studio.publisher.calls)

    studio.draw(None)  # unreadable: suspended, and published at once
    assert [record.kind for record in studio.publisher.calls[-1]] == ["TableSuspended"]
    assert studio.service.published_seq == studio.service.seq == published + 1
    calls += 1
    studio.draw("9S")  # read while suspended
    studio.handle(c.ReportCutCard(DEVICE, "shoe"))
    with pytest.raises(ProcedureError):
        studio.handle(c.ContinuePlay("dealer:x", "not a pit boss"))
    studio.handle(c.CorrectCard(BOSS, 0, Card.parse("6D"), "read by hand"))
    assert studio.service.state.suspended
    assert len(studio.publisher.calls) == calls, "nothing is published while the table waits for the pit boss"
    assert studio.service.published_seq == published + 1
    assert studio.service.public_state.suspension is not None and studio.service.public_state.counts.corrections == 0
    held = list(studio.store.read(TABLE, after=published + 1))
    assert [record.kind for record in held] == [
        "CardReadWhileSuspended",
        "CutCardAppeared",
        "CardCorrected",
    ]

    if resolution == "continue":
        studio.handle(c.ContinuePlay(BOSS, "corrected"))
        resolved = ["PlayContinued", "TableResumed", "CardDealt", "BurnRequired"]
    else:
        studio.handle(c.VoidRound(BOSS, "unreadable card"))
        resolved = ["RoundVoided", "TableResumed", "ShoeEnded"]  # the cut card was out: the voided round was the last
    assert len(studio.publisher.calls) == calls + 1, "the held records are published at once, in one batch"
    assert [record.kind for record in studio.publisher.calls[-1]] == [record.kind for record in held] + resolved
    assert studio.publisher.published == list(studio.store.read(TABLE))
    assert studio.service.public_state == studio.service.state


def test_the_raw_device_data_is_logged_beside_what_the_table_accepted() -> None:
    studio = Studio()
    studio.ready()
    record = list(studio.store.read(TABLE))[-2]  # the last burned card, before BurnCompleted
    assert (record.kind, record.actor, record.raw) == ("CardBurned", DEVICE, "raw-7C")
    assert record.data["card"] == "7C" and record.data["confidence"] == 0.99 and record.at == studio.clock.now()


@pytest.mark.parametrize(
    "command",
    [
        c.OpenBetting(DEALER),
        c.CloseBetting(DEALER),
        c.ContinuePlay(BOSS, "nothing to resolve"),
        c.ConfirmShuffle(DEALER),
        c.PlaceCutCard(DEALER, 3),
        c.CorrectCard(BOSS, 1, Card.parse("QH"), "x"),
    ],
    ids=lambda command: type(command).__name__,
)
def test_a_refused_command_logs_and_publishes_nothing(command: c.Command) -> None:
    studio = Studio()
    studio.handle(c.ConfirmShuffle(DEALER))
    if not isinstance(command, (c.ConfirmShuffle, c.PlaceCutCard)):
        studio.handle(c.PlaceCutCard(DEALER))
        for code in ["2C", "3C", "4C", "5C", "6C", "7C"]:
            studio.draw(code)
        studio.handle(c.OpenBetting(DEALER))
    state, seq, calls = studio.service.state, studio.service.seq, len(studio.publisher.calls)
    log = list(studio.store.read(TABLE))
    with pytest.raises(ProcedureError):
        studio.service.handle(command)
    assert studio.service.state is state
    assert studio.service.seq == seq == studio.store.last_seq(TABLE)
    assert list(studio.store.read(TABLE)) == log
    assert len(studio.publisher.calls) == calls


def test_a_command_with_no_effect_logs_nothing() -> None:
    studio = Studio()
    studio.ready()
    state = studio.service.state
    assert studio.service.handle(c.ReportSourceFailure("system:supervisor", "shoe-1", "cable")) == []
    assert studio.service.state is state and studio.store.last_seq(TABLE) == 10


def test_a_restart_mid_round_rebuilds_the_same_state_and_expects_the_same_card() -> None:
    studio = Studio()
    studio.ready()
    studio.open_and_close()
    studio.draw("2H")
    studio.draw("3D")
    studio.draw(None)  # an unreadable third card, corrected by the pit boss
    studio.handle(c.CorrectCard(BOSS, 0, Card.parse("3S"), "read by hand"))
    studio.handle(c.ContinuePlay(BOSS, "corrected"))
    for code in ["8C", "9C", "10C"]:
        studio.draw(code)
    studio.draw("KC")
    live = studio.service.state
    assert live.phase is Phase.DEALING and live.round is not None
    assert live.round.next_side is Side.PLAYER  # Player 5 draws

    restarted = studio.restarted()
    assert restarted.state == live
    assert restarted.seq == studio.service.seq == studio.store.last_seq(TABLE)

    # The restarted table takes the next card where the live one would have: the Player's third card.
    studio.device_seq += 1
    read = c.CardRead(Card.parse("7H"), "shoe-1", studio.device_seq)
    logged = restarted.handle(c.DrawCard(DEVICE, read))
    game_id = live.round.game_id
    dealt = e.CardDealt(1, 5, Side.PLAYER, c.CardRead(Card.parse("7H"), "shoe-1", 14), game_id=game_id)
    assert [item.event for item in logged] == [dealt]
    assert restarted.state.round is not None and restarted.state.round.next_side is Side.BANKER
    assert studio.restarted().state == restarted.state


def test_a_restart_while_suspended_resumes_the_suspension() -> None:
    studio = Studio()
    studio.ready()
    studio.open_and_close()
    studio.draw("2H")
    studio.draw(None)
    studio.draw("QS")
    studio.handle(c.CorrectCard(BOSS, 0, Card.parse("6D"), "read by hand"))
    restarted = studio.restarted()
    assert restarted.state == studio.service.state and restarted.state.suspended
    assert restarted.state.round is not None
    game_id = restarted.state.round.game_id
    logged = restarted.handle(c.ContinuePlay(BOSS, "corrected"))
    assert [item.event for item in logged][:3] == [
        e.PlayContinued(BOSS, "corrected"),
        e.TableResumed(e.Resumption.CORRECTED),
        e.CardDealt(1, 2, Side.BANKER, c.CardRead(Card.parse("6D"), "shoe-1", 8, 0.99, "raw-None"), game_id=game_id),
    ]


def test_a_restart_while_suspended_still_holds_back_what_was_logged_during_the_suspension() -> None:
    studio = Studio()
    studio.ready()
    studio.open_and_close()
    studio.draw("2H")
    studio.draw(None)
    published = studio.store.last_seq(TABLE)  # the suspension was published at once
    studio.draw("QS")
    publisher = CheckingPublisher(studio.store)
    publisher.calls.append(list(studio.store.read(TABLE))[:published])  # what the first service had published
    restarted = TableService(TABLE, studio.store, studio.clock, studio.config, publisher)
    publisher.service = restarted
    assert restarted.published_seq == published
    restarted.handle(c.ContinuePlay(BOSS, "card set aside"))
    assert [record.kind for record in publisher.calls[-1]] == [
        "CardReadWhileSuspended",
        "PlayContinued",
        "TableResumed",
        "BurnRequired",
    ]
    assert publisher.published == list(studio.store.read(TABLE))


def test_replay_equals_live_after_every_command_of_a_whole_shoe() -> None:
    config = ProcedureConfig(decks=1, cut_card_from_back=36, betting_seconds=5)
    studio = Studio(config)
    deck = iter(seeded_shoe(1, random.Random(7)))
    studio.handle(c.ConfirmShuffle(DEALER))
    studio.handle(c.PlaceCutCard(DEALER))
    assert studio.restarted().state == studio.service.state
    drawn = 0
    while studio.service.state.phase is not Phase.AWAITING_SHUFFLE:
        phase = studio.service.state.phase
        if phase is Phase.READY:
            studio.handle(c.OpenBetting(DEALER))
        elif phase is Phase.BETTING_OPEN:
            studio.clock.advance(5)
            studio.handle(c.CloseBetting(DEALER))
        else:
            if drawn == 52 - 36:
                studio.handle(c.ReportCutCard(DEVICE, "shoe"))
            studio.draw(next(deck).code)
            drawn += 1
        assert studio.restarted().state == studio.service.state
    kinds = [type(event) for event in studio.events()]
    assert kinds[-1] is e.ShoeEnded and kinds.count(e.RoundCompleted) >= 2
    assert e.TableSuspended not in kinds
