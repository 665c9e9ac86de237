"""Random sequences of legal and illegal commands through the table service (memory store, manual clock).

Cards come from a seeded shoe, with unreadable, repeated and stray reads mixed in; dealers open and close betting,
report the cut card, declare errors and change; pit bosses (and people who are not) correct, continue and void, order
early shuffles, approve deck inspections and replace decks; game servers (and others) seat players, move them, let
them leave and pass, and "no more bets" names who bet. After every step the invariants below hold: no hand over
three cards, every result is the rules applied to its cards, burns are counted right, no shuffle is confirmed before
its inspections where the table inspects its decks, a shoe ends early only when a pit boss ordered it, nothing is
published while suspended, replaying the log gives the live state, and a refused command changes neither the state nor
the log; each seat holds one player and each player one seat, and a player who plays the round under way neither
leaves nor changes seats until it ends.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from studio.clock import ManualClock
from studio.domain import commands as c
from studio.domain import events as e
from studio.domain.cards import ALL_CARDS, Card
from studio.domain.errors import ProcedureError
from studio.domain.procedure import TRANSITIONS, Phase, inspection_due
from studio.domain.procedure_config import ProcedureConfig
from studio.domain.records import Record
from studio.domain.rules import Side, outcome
from studio.simulation import seeded_shoe
from studio.store_memory import MemoryEventStore
from studio.table_service import TableService

T0 = datetime(2026, 3, 14, 15, 9, 26, tzinfo=UTC)
TABLE = "T7"
DEALER = "dealer:ann"
BOSS = "pit_boss:bob"
SOURCE = "shoe-1"
DEVICE = "device:shoe-1"
CARDS = st.sampled_from(ALL_CARDS)
DECIDERS = st.sampled_from([BOSS, BOSS, BOSS, "pit_boss:ann", "pit_boss:cid", "dealer:ann", "device:shoe-1"])
REASONS = st.sampled_from(["misread", "misdeal", "misdeal", ""])
SEATERS = st.sampled_from(["game_server:op1", "game_server:op1", "game_server:op2", "dealer:ann"])
PLAYERS = st.sampled_from(["p1", "p2", "p3", "p4", " "])
NICKNAMES = st.sampled_from(["Ann", "ann", "Bea", "", "Cid"])
COMMANDS = st.one_of(
    st.just(c.ConfirmShuffle(DEALER)),
    st.builds(c.PlaceCutCard, st.just(DEALER), st.one_of(st.none(), st.integers(-1, 420))),
    st.builds(c.ReportCutCard, st.sampled_from([DEVICE, DEALER]), st.sampled_from(["shoe", "dealer"])),
    st.just(c.OpenBetting(DEALER)),
    st.just(c.CloseBetting(DEALER)),
    st.builds(c.ChangeDealer, st.just(DEALER), st.sampled_from(["dealer:ann", "dealer:cid", "cid", ""])),
    st.builds(c.DeclareError, st.just(DEALER), st.sampled_from(["card_exposed", "card_dropped", "misdeal"])),
    st.just(c.ReportSourceFailure("system:supervisor", SOURCE, "disconnected")),
    st.builds(
        c.ReportDisagreement,
        st.just("system:supervisor"),
        st.just("shoe and camera differ"),
        st.tuples(st.builds(c.CardRead, CARDS, st.just("camera-1"))),
    ),
    st.builds(c.CorrectCard, DECIDERS, st.integers(0, 6), CARDS, REASONS),
    st.builds(c.ContinuePlay, DECIDERS, REASONS),
    st.builds(c.VoidRound, DECIDERS, REASONS),
    st.builds(c.OrderShuffle, DECIDERS, REASONS),
    st.builds(c.InspectDecks, DECIDERS, st.sampled_from([None, "ann", "dealer:cid", "bob", "pit_boss:cid", " "])),
    st.builds(c.ReplaceDeck, DECIDERS, st.sampled_from(["3", "red-0412", " "]), REASONS),
    st.builds(c.CloseBetting, st.just(DEALER), st.one_of(st.none(), st.frozensets(PLAYERS))),
)
SEAT_COMMANDS = st.one_of(
    st.builds(c.TakeSeat, SEATERS, PLAYERS, NICKNAMES, st.one_of(st.none(), st.integers(0, 6))),
    st.builds(c.ChangeSeat, SEATERS, PLAYERS, st.integers(0, 6)),
    st.builds(c.LeaveSeat, SEATERS, PLAYERS),
    st.builds(c.PassRound, SEATERS, PLAYERS, st.sampled_from([0, 0, 1])),
)


class WatchingPublisher:
    """Checks that nothing but the suspension itself is published while suspended, and that records come in order,
    without gaps."""

    def __init__(self) -> None:
        self.service: TableService | None = None
        self.published: list[Record] = []

    def publish(self, records: Sequence[Record]) -> None:
        assert self.service is not None
        if self.service.state.suspended:  # the suspension goes out at once, as the last record published
            assert records[-1].kind == "TableSuspended", "published while suspended"
        first = self.published[-1].seq + 1 if self.published else 1
        assert [record.seq for record in records] == list(range(first, first + len(records)))
        self.published.extend(records)


class ProcedureMachine(RuleBasedStateMachine):
    @initialize(
        seed=st.integers(0, 2**32 - 1),
        decks=st.sampled_from([1, 8]),
        one_more_hand=st.booleans(),
        allow_early_close=st.booleans(),
        burn_after_error=st.sampled_from([0, 3]),
        allow_early_shuffle=st.booleans(),
        inspect_decks=st.booleans(),
        seats=st.sampled_from([0, 5]),
    )
    def start(
        self,
        seed: int,
        decks: int,
        one_more_hand: bool,
        allow_early_close: bool,
        burn_after_error: int,
        allow_early_shuffle: bool,
        inspect_decks: bool,
        seats: int,
    ) -> None:
        self.config = ProcedureConfig(
            decks=decks,
            cut_card_from_back=52 if decks > 1 else 20,
            betting_seconds=15,
            allow_early_close=allow_early_close,
            one_more_hand=one_more_hand,
            burn_after_error=burn_after_error,
            allow_early_shuffle=allow_early_shuffle,
            inspect_decks=inspect_decks,
            seats=seats,
        )
        self.rng = random.Random(seed)
        self.shoe = seeded_shoe(decks, self.rng)
        self.store = MemoryEventStore()
        self.clock = ManualClock(T0)
        self.publisher = WatchingPublisher()
        self.service = TableService(TABLE, self.store, self.clock, self.config, self.publisher)
        self.publisher.service = self.service
        self.device_seq = 0
        self.last_read: c.CardRead | None = None
        # What the log has shown so far, for the invariants.
        self.checked = 0
        self.burn_left: int | None = None  # cards still to burn, from the BurnRequired events
        self.dealt: dict[int, dict[int, tuple[Side, Card]]] = {}  # round -> position -> card, corrections applied
        self.suspended_at = 0  # seq of the last TableSuspended
        self.results = 0
        self.refusals = 0
        self.inspected: set[tuple[e.InspectionStage, int]] = set()  # (stage, shoe) of each inspection logged
        self.shuffle_ordered = False  # a ShuffleOrdered was logged and its ShoeEnded not yet

    # -- driving ------------------------------------------------------------------------------------------------------

    def apply(self, command: c.Command) -> None:
        state, length = self.service.state, self.store.last_seq(TABLE)
        try:
            self.service.handle(command)
        except ProcedureError as error:
            self.refusals += 1
            assert self.service.state is state and self.service.state == state
            assert self.store.last_seq(TABLE) == length == self.service.seq
            assert error.phase == state.phase.value and error.command == type(command).__name__
            return
        # The procedure's table says where each move leads: the table is now in one of those phases.
        move = TRANSITIONS[state.phase][type(command)]
        assert self.service.state.phase in move.leads_to, (state.phase, type(command).__name__)
        if isinstance(command, (c.LeaveSeat, c.ChangeSeat)) and self.service.state.seats != state.seats:
            # Only a player with no part in the round under way moves (seed 004: between rounds).
            seat = next(seat for seat in state.seats if seat.player_id == command.player_id)
            current = state.round
            idle = current is None or seat.first_round > current.number
            assert idle or (current is not None and current.number in (seat.passed, seat.sat_out))
        if isinstance(command, c.ConfirmShuffle):
            self.shoe = seeded_shoe(self.config.decks, self.rng)  # a new shoe, freshly shuffled
        self.check_new_records()

    def read(self, card: Card | None, seq: int | None = None) -> None:
        if seq is None:
            self.device_seq += 1
            seq = self.device_seq
        self.last_read = c.CardRead(card, SOURCE, seq, 0.98, f"{seq:04x}")
        self.clock.advance(1)
        self.apply(c.DrawCard(DEVICE, self.last_read))

    def draw(self) -> None:
        self.read(self.shoe.pop() if self.shoe else self.rng.choice(ALL_CARDS))

    def draw_unreadable(self) -> None:
        self.read(None)

    @rule(kind=st.sampled_from(["shoe", "shoe", "shoe", "shoe", "unreadable", "again", "stray"]), stray=CARDS)
    def card_comes_out(self, kind: str, stray: Card) -> None:
        if kind == "shoe":
            self.draw()
        elif kind == "unreadable":
            self.draw_unreadable()
        elif kind == "again" and self.last_read is not None:
            self.clock.advance(1)
            self.apply(c.DrawCard(DEVICE, self.last_read))  # the device reports the same read twice
        else:
            self.read(stray)  # not the shoe's next card: possibly one copy more than the shoe holds

    @rule(seconds=st.integers(0, 20))
    def wait(self, seconds: int) -> None:
        self.clock.advance(seconds)

    @rule(command=COMMANDS)
    def anyone_asks(self, command: c.Command) -> None:
        """Any command but a card, legal now or not."""
        self.apply(command)

    @rule(command=SEAT_COMMANDS)
    def a_game_server_seats_its_player(self, command: c.Command) -> None:
        """Seats taken, changed and left, rounds passed, by game servers (and by others, who are refused)."""
        self.apply(command)

    @rule(moves=st.lists(st.integers(0, 9), min_size=1, max_size=12))
    def play_on(self, moves: list[int]) -> None:
        """What a dealer and a pit boss following the procedure might do next, one move each; the move numbers pick
        among the plausible actions (mostly the expected one, sometimes an error and its resolution)."""
        for move in moves:
            state = self.service.state
            phase = state.phase
            if phase is Phase.AWAITING_SHUFFLE:
                if inspection_due(state) is None:
                    self.apply(c.ConfirmShuffle(DEALER))
                elif move == 9:
                    self.apply(c.ReplaceDeck(BOSS, "3", "a bent card"))
                else:
                    self.apply(c.InspectDecks(BOSS, "dealer:dee"))
            elif phase is Phase.AWAITING_CUT:
                self.apply(c.PlaceCutCard(DEALER))
            elif phase is Phase.READY:
                if move == 9:
                    self.apply(c.ChangeDealer(DEALER, "dealer:cid" if state.dealer == DEALER else DEALER))
                elif move == 8:
                    self.apply(c.ReportCutCard(DEALER))
                elif move == 7:
                    self.apply(c.OrderShuffle(BOSS, "suspected marked card"))
                elif move in (5, 6) and self.config.seats:
                    player = f"p{self.rng.randint(1, 4)}"
                    self.apply(c.TakeSeat("game_server:op1", player, player.upper()))
                else:
                    self.apply(c.OpenBetting(DEALER))
            elif phase is Phase.BETTING_OPEN:
                for seat in state.seats[: move % 3]:  # some seated players pass
                    self.apply(c.PassRound(f"game_server:{seat.game_server}", seat.player_id))
                self.clock.advance(self.config.betting_seconds)
                self.apply(c.CloseBetting(DEALER, frozenset({"p1", "p3"}) if move % 2 else None))
            elif phase is Phase.SUSPENDED:
                self.resolve(move)
            elif move == 9:
                self.apply(c.DeclareError(DEALER, "card_exposed"))
            elif move == 8:
                self.draw_unreadable()
            elif move == 7:
                self.apply(c.ReportCutCard(DEVICE, "shoe"))
            else:
                self.draw()

    def resolve(self, move: int) -> None:
        state = self.service.state
        dealt = len(state.round.dealt) if state.round is not None else 0
        if move in (4, 5):
            self.apply(c.VoidRound(BOSS, "misdeal"))
        elif move in (6, 7):
            card = self.shoe[-1] if self.shoe else self.rng.choice(ALL_CARDS)
            self.apply(c.CorrectCard(BOSS, 0, card, "read by hand"))
        elif move in (8, 9) and dealt:
            position = self.rng.randint(1, dealt)
            self.apply(c.CorrectCard(BOSS, position, self.rng.choice(ALL_CARDS), "camera review"))
        else:
            self.apply(c.ContinuePlay(BOSS, "resolved"))

    # -- what the log says --------------------------------------------------------------------------------------------

    def check_new_records(self) -> None:
        for record in self.store.read(TABLE, after=self.checked):
            event = e.decode(record.kind, record.data, record.raw)
            self.check_event(event, record.seq)
            self.checked = record.seq
        assert self.checked == self.store.last_seq(TABLE) == self.service.seq

    def check_event(self, event: e.Event, seq: int) -> None:
        match event:
            case e.BurnRequired(count=count):
                assert count > 0
                self.burn_left = (self.burn_left or 0) + count  # an error during a burn adds to it
            case e.CardBurned():
                assert self.burn_left is not None and self.burn_left > 0, "a card burned that no burn required"
                self.burn_left -= 1
            case e.BurnCompleted():
                assert self.burn_left == 0, f"burn completed with {self.burn_left} cards still to burn"
                self.burn_left = None
            case e.ShoeEnded(reason=reason):
                self.burn_left = None
                assert (reason is e.ShoeEndReason.EARLY_SHUFFLE) == self.shuffle_ordered, "ended early unordered"
                self.shuffle_ordered = False
            case e.ShuffleOrdered():
                assert self.config.allow_early_shuffle
                self.shuffle_ordered = True
            case e.DecksInspected(stage=stage, shoe=shoe, approved_by=approver, dealer=dealer):
                assert self.config.inspect_decks
                assert approver.startswith("pit_boss:") and dealer.startswith("dealer:")
                assert approver.partition(":")[2] != dealer.partition(":")[2], "a dealer approved their own"
                assert (stage, shoe) not in self.inspected, "the same inspection twice"
                self.inspected.add((stage, shoe))
            case e.ShuffleConfirmed(shoe=shoe) if self.config.inspect_decks:
                assert (e.InspectionStage.START, shoe) in self.inspected, f"shoe {shoe} shuffled uninspected"
                assert shoe == 1 or (e.InspectionStage.END, shoe - 1) in self.inspected, f"shoe {shoe - 1} unchecked"
            case e.CardDealt(round=number, position=position, side=side, card=card):
                hand = self.dealt.setdefault(number, {})
                assert position == len(hand) + 1
                hand[position] = (side, card)
                assert sum(1 for s, _ in hand.values() if s is side) <= 3, "a fourth card to one hand"
            case e.CardCorrected(round=number, position=position, original=original, corrected=card) if position > 0:
                assert number is not None
                side, old = self.dealt[number][position]
                assert old == original
                self.dealt[number][position] = (side, card)
            case e.RoundCompleted():
                hand = self.dealt[event.round]
                player = tuple(card for _, (side, card) in sorted(hand.items()) if side is Side.PLAYER)
                banker = tuple(card for _, (side, card) in sorted(hand.items()) if side is Side.BANKER)
                assert (event.player, event.banker) == (player, banker)
                assert len(player) <= 3 and len(banker) <= 3
                result = outcome(event.player, event.banker)
                assert (event.winner, event.player_total, event.banker_total) == (
                    result.winner,
                    result.player_total,
                    result.banker_total,
                )
                assert (event.natural, event.player_pair, event.banker_pair) == (
                    result.natural,
                    result.player_pair,
                    result.banker_pair,
                )
                self.results += 1
            case e.TableSuspended():
                self.suspended_at = seq
            case _:
                pass

    # -- invariants ---------------------------------------------------------------------------------------------------

    @invariant()
    def the_state_is_coherent(self) -> None:
        state = self.service.state
        assert (state.phase is Phase.SUSPENDED) == (state.suspension is not None)
        if state.phase is Phase.DEALING:
            assert state.round is not None and state.round.next_side is not None
        if state.phase is Phase.BURNING:
            assert state.burn is not None and state.burn.remaining > 0
        if state.round is not None:
            assert len(state.round.player) <= 3 and len(state.round.banker) <= 3
        assert (state.burn is None) == (self.burn_left is None)
        if state.burn is not None:
            assert state.burn.remaining == self.burn_left

    @invariant()
    def each_seat_holds_one_player(self) -> None:
        seats = self.service.state.seats
        assert len({seat.number for seat in seats}) == len({seat.player_id for seat in seats}) == len(seats)
        assert all(1 <= seat.number <= self.config.seats for seat in seats)
        assert all(seat.player_id.strip() and seat.game_server in ("op1", "op2") for seat in seats)

    @invariant()
    def nothing_is_published_while_suspended(self) -> None:
        logged = self.store.last_seq(TABLE)
        published = [record.seq for record in self.publisher.published]
        if self.service.state.suspended:  # up to the suspension itself (`table_suspended`), then nothing
            assert published == list(range(1, self.suspended_at + 1))
        else:
            assert published == list(range(1, logged + 1))

    @invariant()
    def replay_equals_live(self) -> None:
        replayed = TableService(TABLE, self.store, self.clock, self.config)
        assert replayed.state == self.service.state
        assert replayed.seq == self.service.seq


ProcedureMachine.TestCase.settings = settings(max_examples=50, stateful_step_count=60, deadline=None)
TestProcedureMachine = ProcedureMachine.TestCase
