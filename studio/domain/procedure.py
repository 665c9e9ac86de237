"""The studio procedure: one table of legal moves (`TRANSITIONS`), `decide(state, command, now) -> events`,
`evolve(state, event) -> state`.

How to read it: the table at the end of the decide section lists, for each `Phase`, every command the phase accepts,
the handler that decides what follows, and every phase the table can be in afterwards. A command a phase does not
list is refused with a `ProcedureError` naming the phase, the command and the phase's commands, and nothing is
logged. The phases, in the order a shoe goes through them:

    AWAITING_SHUFFLE --ConfirmShuffle--> AWAITING_CUT --PlaceCutCard--> BURNING (6) --cards--> READY
    READY --OpenBetting--> BETTING_OPEN --CloseBetting--> DEALING --cards--> READY (or, after the last hand,
    AWAITING_SHUFFLE); any error --> SUSPENDED --pit boss: ContinuePlay / VoidRound--> BURNING (3) --> play resumes;
    AWAITING_SHUFFLE or READY --CloseTable--> CLOSED --OpenTable--> where it was;
    READY --pit boss: OrderShuffle--> AWAITING_SHUFFLE (the shoe ends early); in AWAITING_SHUFFLE, where the table
    inspects its decks, --pit boss: InspectDecks (ReplaceDeck)--> AWAITING_SHUFFLE until no inspection is due.

Rules held here (seed 000 section 3, DESIGN.md §5; every number is in `ProcedureConfig`):
- A shoe starts with the dealer confirming the shuffle, then the cut card goes in front of the last deck (52 cards).
- Deck inspection (`inspection_due`, seed 000 §1.3.3, §3.1; `inspect_decks`): the decks are inspected when a shoe has
  ended and before the next is shuffled, by the dealer with a pit boss who approves it (never the dealer themself);
  the ended shoe's inspection comes first, then the next shoe's, and no shuffle is confirmed while one is due. During
  an inspection a pit boss may replace a defective deck, with a reason.
- Early shuffle (seed 000 §3.2.3; `allow_early_shuffle`): between rounds a pit boss may order the shoe reshuffled; the
  shoe ends then, its summary saying why (`ShoeEndReason`).
- Burns (`burn_count`, `_burn`): 6 cards after a shuffle, 3 after an error on the pit boss's approval, 1 for a new
  dealer before the next round; a burned card is read and logged, never dealt.
- A round: betting opens with a timer; "no more bets" when it ends (early only if the table allows it); then cards go
  P, B, P, B and third cards by the rules; the result is recorded when the deal is complete.
- Betting time back (`_betting_back`; `betting_seconds_after_error`): when a round interrupted during betting goes on
  (the pit boss continued, the error burn is done), its betting stays open for at least that many seconds more, so
  players are not shut out by a suspension they did not cause (`BettingReopened`).
- The last hand (`_last_round_when_cut_card_appears`, `is_last_hand`): when the cut card appears, the round in
  progress (or, between rounds, the next round) is the last hand of the shoe; with the "one more hand" option, one
  more round follows. Then no card is accepted until a new shoe is shuffled.
- A card out of the shoe means one thing per phase, each with its handler: burned (BURNING), dealt (DEALING), a card
  while betting is open, a card when none is due, a card while suspended. A card that physically came out of the
  shoe is never refused: it is logged, and suspends the table when it was not due.
- Any break of the procedure suspends the table for the pit boss: a card while betting is open, a card when none is
  due, a card read twice, an unreadable card, more copies of a card than the shoe holds, a source failing mid-round,
  sources disagreeing, an error declared by the dealer. A pit boss (an `Actor` of that role), never the dealer on
  duty, corrects cards, lets play continue or voids the round; then 3 cards are burned on their approval.
- Seats (seed 004; `seats`, 0 for a table without seats): a game server seats its players (`TakeSeat`, one seat per
  player, a nickname no other seated player uses) in any phase; a seat taken while a round is under way (betting
  open, dealing, or that round suspended) plays from the next round. A player who takes part in the round under way
  (seated before it opened, and who has not passed or sat out) leaves or changes seats only once it ends; a player
  with no part in it may at any time. Only the game server that seated a player moves them. While betting is open
  and its timer runs, a seated player may pass the round (`PassRound`, before any bet of theirs); at "no more bets"
  every active seated player who neither bet (`CloseBetting.bettors`, from the ledger) nor passed sits the round out
  (`PlayerSatOut`). Who may bet at a table with seats is `studio.domain.seats.bet_refusal`.
"""

from __future__ import annotations

import enum
import unicodedata
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from studio.domain import commands as c
from studio.domain import events as e
from studio.domain.cards import ALL_CARDS, Card
from studio.domain.errors import InvalidDeal, ProcedureError
from studio.domain.events import BurnReason, InspectionStage, ShoeEndReason, SuspensionReason
from studio.domain.procedure_config import ProcedureConfig
from studio.domain.roles import Actor, Role
from studio.domain.rules import Side, next_recipient, next_recipient_in_order, outcome_in_order


class Phase(enum.Enum):
    AWAITING_SHUFFLE = "awaiting_shuffle"
    AWAITING_CUT = "awaiting_cut"
    BURNING = "burning"
    READY = "ready"  # between rounds: the dealer may open betting
    BETTING_OPEN = "betting_open"
    DEALING = "dealing"
    SUSPENDED = "suspended"
    CLOSED = "closed"  # a pit boss closed the table between rounds: no round opens until it is opened again

    # A member is its own key: `decide` looks the phase up for every command, and an Enum's own hash (of its name) is
    # a Python call. Members are singletons that compare by identity, so the identity hash is consistent with it.
    __hash__ = object.__hash__


class Burn(NamedTuple):
    reason: BurnReason
    remaining: int
    then: Phase  # where play resumes once the burn is done
    approved_by: str | None = None


class Round(NamedTuple):
    number: int
    game_id: str
    opened_at: datetime
    closes_at: datetime
    dealt: tuple[tuple[Side, Card], ...] = ()
    next_side: Side | None = Side.PLAYER  # who receives the next card; None once the deal is complete

    @property
    def player(self) -> list[Card]:
        return [card for side, card in self.dealt if side is Side.PLAYER]

    @property
    def banker(self) -> list[Card]:
        return [card for side, card in self.dealt if side is Side.BANKER]

    def with_dealt(self, dealt: tuple[tuple[Side, Card], ...]) -> Round:
        """The round with `dealt` in place of its cards (a pit boss's correction): the whole deal is checked."""
        player = [card for side, card in dealt if side is Side.PLAYER]
        banker = [card for side, card in dealt if side is Side.BANKER]
        return self._replace(dealt=dealt, next_side=next_recipient(player, banker))

    def with_card(self, side: Side, card: Card) -> Round:
        """The round once `card` is dealt to `side`, which must be the side due (`InvalidDeal` if not).

        The cards before it were checked as they were dealt, so only the new card's place is: a whole check, as
        `with_dealt` makes, cost more than all the rest of a card's decide and evolve."""
        global _last_card  # noqa: PLW0603 - a cache of one entry, see below
        last = _last_card
        if last is not None and last[0] is self and last[1] is side and last[2] is card:
            return last[3]
        if side is not self.next_side:
            due = "nobody: the deal is complete" if self.next_side is None else f"the {self.next_side.value}"
            raise InvalidDeal(f"card {len(self.dealt) + 1} went to the {side.value}; the rules give it to {due}")
        dealt = (*self.dealt, (side, card))
        after = Round(self.number, self.game_id, self.opened_at, self.closes_at, dealt, next_recipient_in_order(dealt))
        _last_card = (self, side, card, after)
        return after


# The last card `Round.with_card` dealt: (the round, the side, the card, the round after it). `decide` works out the
# round after each card, to know whether the deal is complete, and `evolve` then deals the same card to the same round
# (the same objects): it finds the answer here. A round is immutable, so the same objects give the same answer, and a
# miss (another table, a replay) only works it out again.
_last_card: tuple[Round, Side, Card, Round] | None = None


class Suspension(NamedTuple):
    reason: str
    detail: str
    resume: Phase  # the phase the error interrupted
    read: c.CardRead | None = None  # the read that caused it, if any
    corrected: Card | None = None  # what the pit boss says that read really was
    corrections: int = 0  # cards the pit boss corrected during this suspension


class Seat(NamedTuple):
    number: int  # 1 to `ProcedureConfig.seats`
    player_id: str  # the game server's id of the player
    game_server: str  # the game server that seated them
    nickname: str  # what the table is shown
    first_round: int  # the first round they play
    passed: int = 0  # the last round they passed
    sat_out: int = 0  # the last round they sat out


class ShoeCounts(NamedTuple):
    rounds: int = 0
    voids: int = 0
    corrections: int = 0
    dealt: int = 0
    burned: int = 0
    set_aside: int = 0


class TableState(NamedTuple):
    table_id: str
    config: ProcedureConfig = ProcedureConfig()
    phase: Phase = Phase.AWAITING_SHUFFLE
    dealer: str | None = None
    shoe: int = 0  # shoes started on this table
    rounds_started: int = 0  # rounds opened on this table, all shoes: the round number
    cut_position: int | None = None  # cards in front of the cut card
    cards_drawn: int = 0  # cards out of this shoe, whatever became of them
    seen: tuple[int, ...] = (0,) * len(ALL_CARDS)  # copies of each card seen this shoe, in ALL_CARDS order
    last_device_seq: tuple[tuple[str, int], ...] = ()  # per source, the last device sequence number accepted
    device_sessions: tuple[tuple[str, str], ...] = ()  # per source, the session that number counts in, if it says
    last_round: int | None = None  # set when the cut card has appeared
    burn: Burn | None = None
    round: Round | None = None
    suspension: Suspension | None = None
    counts: ShoeCounts = ShoeCounts()
    last_result: e.RoundCompleted | None = None
    reopens_in: Phase | None = None  # while closed: the phase the table returns to
    start_inspected: int = 0  # the last shoe whose decks were inspected before its shuffle
    end_inspected: int = 0  # the last shoe whose decks were inspected once it had ended
    seats: tuple[Seat, ...] = ()  # the seated players, by seat number

    @property
    def suspended(self) -> bool:
        return self.phase is Phase.SUSPENDED

    def copies_seen(self, card: Card) -> int:
        return self.seen[card.index]


CARD_INDEX = {card: card.index for card in ALL_CARDS}  # where `TableState.seen` counts each card (`Card.index`)


def game_id(table_id: str, round_number: int, opened_at: datetime) -> str:
    """The number a player quotes: table, UTC date and start time (hhmmss), and the table's round number."""
    # Field by field, as `%Y%m%d-%H%M%S` writes them (the year unpadded): strftime costs twice as much.
    day = f"{opened_at.year}{opened_at.month:02d}{opened_at.day:02d}"
    return f"{table_id}-{day}-{opened_at.hour:02d}{opened_at.minute:02d}{opened_at.second:02d}-{round_number:04d}"


# ---------------------------------------------------------------------------------------------------------------------
# decide: the handlers. Each returns the events that follow, or raises ProcedureError (through `_refuse`).

Handler = Callable[[TableState, c.Command, datetime], list[e.Event]]


def _refuse(state: TableState, command: c.Command, reason: str) -> ProcedureError:
    return ProcedureError(state.phase.value, type(command).__name__, reason, expected_commands(state.phase))


# The burns (seed 000 §3): how many cards each calls for, all in one place. -------------------------------------------


def burn_count(reason: BurnReason, config: ProcedureConfig) -> int:
    """Cards to burn after a shuffle (6), after an error (3, on the pit boss's approval), for a new dealer (1)."""
    return {
        BurnReason.SHUFFLE: config.burn_after_shuffle,
        BurnReason.ERROR: config.burn_after_error,
        BurnReason.DEALER_CHANGE: config.burn_after_dealer_change,
    }[reason]


def _burn(state: TableState, reason: BurnReason, approved_by: Actor | None = None) -> list[e.Event]:
    """The burn `reason` calls for, if any. After a shuffle the burn is logged even when it is of no card, and then
    completed at once: it is what brings a new shoe to READY."""
    count = burn_count(reason, state.config)
    required = e.BurnRequired(reason, count, None if approved_by is None else str(approved_by))
    if reason is BurnReason.SHUFFLE:
        return [required] if count > 0 else [required, e.BurnCompleted(reason)]
    return [required] if count > 0 else []


# The last hand (seed 000 §3): when the cut card appears, the round in play is the last of the shoe (or, between
# rounds, the next one); with "one more hand", one more round follows. All in one place. ---------------------------


def _last_round_when_cut_card_appears(state: TableState) -> int:
    in_round = state.round is not None or (state.suspension is not None and state.suspension.resume is Phase.DEALING)
    last = state.rounds_started if in_round else state.rounds_started + 1
    return last + (1 if state.config.one_more_hand else 0)


def is_last_hand(state: TableState, round_number: int) -> bool:
    """Whether round `round_number` is the last of the shoe (known once the cut card has appeared)."""
    return state.last_round is not None and round_number >= state.last_round


# Deck inspection (seed 000 §1.3.3, §3.1): at the end of a shoe and before the next is shuffled. All in one place. --


def inspection_due(state: TableState) -> tuple[InspectionStage, int] | None:
    """The inspection the table waits for before the next shuffle, and the shoe it is of: the ended shoe's first, then
    the next shoe's. None where the table does not inspect its decks, or while a shoe is under way."""
    if not state.config.inspect_decks or state.phase is not Phase.AWAITING_SHUFFLE:
        return None
    if state.shoe > 0 and state.end_inspected < state.shoe:
        return InspectionStage.END, state.shoe
    if state.start_inspected <= state.shoe:
        return InspectionStage.START, state.shoe + 1
    return None


def _inspection_needed(state: TableState, command: c.Command) -> tuple[InspectionStage, int]:
    if not state.config.inspect_decks:
        raise _refuse(state, command, "this table does not record deck inspections (procedure.inspect_decks)")
    due = inspection_due(state)
    if due is None:
        raise _refuse(state, command, f"the decks of shoe {state.shoe + 1} are inspected already: shuffle them")
    return due


def _inspect_decks(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    assert isinstance(command, c.InspectDecks)
    stage, shoe = _inspection_needed(state, command)
    _check_pit_boss(state, command)
    named = command.dealer if command.dealer is not None else state.dealer
    if named is None or not named.strip():
        raise _refuse(state, command, "name the dealer who inspected the decks: no dealer is on duty at this table")
    try:
        dealer = Actor.parse(named.strip(), bare=Role.DEALER)
    except ValueError:
        raise _refuse(state, command, "name the dealer who inspected the decks (a name, or dealer:name)") from None
    if dealer.kind is not Role.DEALER:
        raise _refuse(state, command, f"{dealer} is not a dealer: name the dealer who inspected the decks")
    if dealer.name == command.actor.name:
        raise _refuse(state, command, "the dealer who inspected the decks cannot approve the inspection")
    return [e.DecksInspected(shoe, stage, state.config.decks, str(dealer), str(command.actor))]


def _replace_deck(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    assert isinstance(command, c.ReplaceDeck)
    stage, shoe = _inspection_needed(state, command)
    _check_pit_boss(state, command)
    if not command.deck.strip():
        raise _refuse(state, command, "name the deck replaced")
    if not command.reason.strip():
        raise _refuse(state, command, "replacing a deck needs a reason: its defect")
    return [e.DeckReplaced(shoe, stage, command.deck.strip(), command.reason, str(command.actor))]


# A shoe ---------------------------------------------------------------------------------------------------------------


def _confirm_shuffle(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    due = inspection_due(state)
    if due is not None:
        stage, shoe = due
        which = f"shoe {shoe}, which has ended," if stage is InspectionStage.END else f"shoe {shoe}"
        raise _refuse(state, command, f"inspect the decks of {which} first: a pit boss approves the inspection")
    return [e.ShuffleConfirmed(state.shoe + 1, str(command.actor))]


def _order_shuffle(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    assert isinstance(command, c.OrderShuffle)
    _check_pit_boss(state, command)
    if not state.config.allow_early_shuffle:
        raise _refuse(state, command, "this table does not allow an early shuffle (procedure.allow_early_shuffle)")
    if not command.reason.strip():
        raise _refuse(state, command, "an early shuffle needs a reason")
    ordered = e.ShuffleOrdered(state.shoe, command.reason, str(command.actor))
    return [ordered, _shoe_ended(state, reason=ShoeEndReason.EARLY_SHUFFLE)]


def _place_cut_card(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    assert isinstance(command, c.PlaceCutCard)
    size = state.config.shoe_size
    position = size - state.config.cut_card_from_back if command.cards_in_front is None else command.cards_in_front
    first_usable = state.config.burn_after_shuffle + 4
    if not first_usable <= position <= size:
        raise _refuse(
            state, command, f"the cut card must leave {first_usable} to {size} cards in front, not {position}"
        )
    return [e.CutCardPlaced(state.shoe, position, state.config.decks), *_burn(state, BurnReason.SHUFFLE)]


def _report_cut_card(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    assert isinstance(command, c.ReportCutCard)
    if state.last_round is not None:
        return []  # already known (the shoe and the dealer may both report it)
    return [e.CutCardAppeared(command.source, _last_round_when_cut_card_appears(state))]


def _shoe_ended(state: TableState, rounds: int = 0, voids: int = 0, dealt: tuple[Card, ...] = (),
                reason: ShoeEndReason = ShoeEndReason.CUT_CARD) -> e.ShoeEnded:  # fmt: skip
    """The shoe's summary; `dealt` are cards dealt by the events that end it, which `state` has not counted yet."""
    counts = state.counts
    seen = state.seen
    for card in dealt:
        seen = _count(seen, card, 1)
    cards = counts.dealt + len(dealt) + counts.burned + counts.set_aside
    over = [f"{card.code} × {n}" for card, n in zip(ALL_CARDS, seen, strict=True) if n > state.config.decks]
    problems = []
    if over:
        problems.append("more copies than the shoe holds: " + ", ".join(over))
    if cards > state.config.shoe_size:
        problems.append(f"{cards} cards out of a {state.config.shoe_size}-card shoe")
    detail = "; ".join(problems) or f"{cards} cards out of {state.config.shoe_size}, no card over {state.config.decks}"
    return e.ShoeEnded(
        shoe=state.shoe,
        rounds=counts.rounds + rounds,
        voids=counts.voids + voids,
        corrections=counts.corrections,
        cards_dealt=counts.dealt + len(dealt),
        cards_burned=counts.burned,
        cards_set_aside=counts.set_aside,
        composition_ok=not problems,
        composition_detail=detail,
        reason=reason,
    )


# A round --------------------------------------------------------------------------------------------------------------


def _open_betting(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    number = state.rounds_started + 1
    closes = now + timedelta(seconds=state.config.betting_seconds)
    return [e.BettingOpened(number, game_id(state.table_id, number, now), now, closes)]


def _close_betting(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    assert isinstance(command, c.CloseBetting) and state.round is not None
    current = state.round
    early = now < current.closes_at
    if early and not state.config.allow_early_close:
        left = (current.closes_at - now).total_seconds()
        raise _refuse(state, command, f"betting is open for {left:.1f} s more; this table does not allow early close")
    closed: list[e.Event] = [e.BettingClosed(current.number, current.game_id, early)]
    if not state.config.seats:
        return closed
    bettors = command.bettors or frozenset()
    idle = [seat for seat in state.seats if _plays(seat, current.number) and seat.player_id not in bettors]
    return closed + [e.PlayerSatOut(current.number, current.game_id, s.number, s.player_id, s.nickname) for s in idle]


def _change_dealer(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    assert isinstance(command, c.ChangeDealer)
    try:
        Actor.parse(command.dealer, bare=Role.DEALER)
    except ValueError:
        raise _refuse(state, command, "name the dealer taking over (a name, or dealer:name)") from None
    changed: list[e.Event] = [e.DealerChanged(command.dealer, command.display_name)]
    if state.phase is Phase.READY:  # between two shoes the new dealer starts with the shuffle's burn
        changed += _burn(state, BurnReason.DEALER_CHANGE)
    return changed


def _as_accepted(read: c.CardRead, card: Card) -> c.CardRead:
    """The read as the table takes it: with the pit boss's card if they corrected it (the read itself, most often)."""
    return read if read.card is card or read.card == card else replace(read, card=card)


def _deal_card(state: TableState, read: c.CardRead, card: Card) -> list[e.Event]:
    """Deal a card to whichever hand the rules say, and complete the round if that was the last card it takes."""
    assert state.round is not None
    current = state.round
    side = current.next_side
    assert side is not None, "a complete deal is never left in DEALING"
    dealt = e.CardDealt(current.number, len(current.dealt) + 1, side, _as_accepted(read, card), current.game_id)
    after = current.with_card(side, card)
    if after.next_side is not None:
        return [dealt]
    return [dealt, *_complete_if_dealt(state, after)]


def _complete_if_dealt(state: TableState, current: Round) -> list[e.Event]:
    if current.next_side is not None:
        return []
    result = outcome_in_order(current.dealt)  # each card was checked as it was dealt (`Round.with_card`)
    last_hand = is_last_hand(state, current.number)
    completed = e.RoundCompleted(current.number, current.game_id, result.player, result.banker, result.player_total,
                                 result.banker_total, result.winner, result.natural, result.player_pair,
                                 result.banker_pair, last_hand)  # fmt: skip
    if not last_hand:
        return [completed]
    assert state.round is not None
    just_dealt = tuple(card for _, card in current.dealt[len(state.round.dealt) :])  # not yet counted in `state`
    return [completed, _shoe_ended(state, rounds=1, dealt=just_dealt)]


def _burn_card(state: TableState, read: c.CardRead, card: Card) -> list[e.Event]:
    assert state.burn is not None
    burned: list[e.Event] = [e.CardBurned(_as_accepted(read, card))]
    if state.burn.remaining == 1:
        burned.append(e.BurnCompleted(state.burn.reason))
    return burned


def _reopen_betting(state: TableState, now: datetime) -> list[e.Event]:
    """Betting open again for the configured time (never less than the round had left), once play resumes in a
    round's betting after an error; nothing where the table gives no time back."""
    seconds = state.config.betting_seconds_after_error
    if state.round is None or seconds <= 0:
        return []
    closes = max(state.round.closes_at, now + timedelta(seconds=seconds))
    return [e.BettingReopened(state.round.number, state.round.game_id, closes)]


def _betting_back(state: TableState, events: list[e.Event], now: datetime) -> list[e.Event]:
    """The betting time given back when `events` (decided in `state`) end a burn that returns to a round's betting."""
    if state.burn is None or state.burn.then is not Phase.BETTING_OPEN:
        return []
    if not any(isinstance(event, e.BurnCompleted) for event in events):
        return []
    return _reopen_betting(state, now)


# A card read: one handler for each thing a card out of the shoe can mean --------------------------------------------


def _read_problem(state: TableState, read: c.CardRead) -> tuple[SuspensionReason, str] | None:
    """Why an otherwise due card cannot be accepted, if it cannot."""
    if read.card is None:
        return SuspensionReason.UNREADABLE_CARD, f"{read.source} could not read the card"
    # The same read reported again. Only equality counts: device counters wrap round and restart from zero. A new
    # session (the device rebooted, the camera reopened) numbers from the start again: no duplicate across two.
    if (read.device_seq is not None and read.device_seq == _of_source(state.last_device_seq, read.source)
            and _of_source(state.device_sessions, read.source) == read.device_session):  # fmt: skip
        return SuspensionReason.DUPLICATE_READ, f"{read.source} reported sequence {read.device_seq} again"
    if state.seen[read.card.index] >= state.config.decks:
        return SuspensionReason.TOO_MANY_COPIES, (
            f"{read.card.code} seen {state.copies_seen(read.card) + 1} times; the shoe holds {state.config.decks}"
        )
    return None


def _of_source(pairs: tuple[tuple[str, Any], ...], source: str) -> Any:
    """What `pairs` (per source: `last_device_seq`, `device_sessions`) hold for `source`, or None."""
    for name, value in pairs:
        if name == source:
            return value
    return None


def _suspend(state: TableState, reason: SuspensionReason, detail: str, read: c.CardRead | None) -> e.TableSuspended:
    game_id = state.round.game_id if state.round is not None else None
    return e.TableSuspended(reason.value, detail, read, game_id)


def _read_of(command: c.Command) -> c.CardRead:
    assert isinstance(command, c.DrawCard)
    return command.read


# A card that is due is taken (burned or dealt), unless the read is unusable: then the table suspends.


def _burn_read(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    read = _read_of(command)
    problem = _read_problem(state, read)
    if problem is not None:
        return [_suspend(state, *problem, read)]
    assert read.card is not None
    burned = _burn_card(state, read, read.card)
    return burned + _betting_back(state, burned, now)


def _deal_read(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    assert isinstance(command, c.DrawCard)  # `_read_of`, written out: this runs for every card dealt
    read = command.read
    problem = _read_problem(state, read)
    if problem is not None:
        return [_suspend(state, *problem, read)]
    assert read.card is not None
    return _deal_card(state, read, read.card)  # where the rules say


def _card_while_betting(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    """A card before "no more bets": bets are committed before the first card, so the table stops."""
    return [_suspend(state, SuspensionReason.CARD_WHILE_BETTING, "a card came out while betting was open",
                     _read_of(command))]  # fmt: skip


def _card_not_due(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    """A card when none is due (before the cut, between rounds, while closed): never refused silently."""
    return [_suspend(state, SuspensionReason.CARD_NOT_DUE, f"no card is due in phase {state.phase.value}",
                     _read_of(command))]  # fmt: skip


def _card_while_suspended(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    """A card while the table waits for the pit boss: logged and set aside for them, not dealt."""
    return [e.CardReadWhileSuspended(_read_of(command))]


# Errors: each suspends the table for the pit boss ---------------------------------------------------------------------


def _declare_error(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    assert isinstance(command, c.DeclareError)
    detail = f"{command.kind}: {command.detail}" if command.detail else command.kind
    return [_suspend(state, SuspensionReason.DEALER_DECLARED, detail, None)]


def _source_failed(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    assert isinstance(command, c.ReportSourceFailure)
    detail = f"{command.source} failed: {command.detail}" if command.detail else f"{command.source} failed"
    return [_suspend(state, SuspensionReason.SOURCE_FAILED, detail, None)]


def _source_failed_between_rounds(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    return []  # no round to protect: a failed source is the supervisor's concern (it shows on the console)


def _report_disagreement(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    assert isinstance(command, c.ReportDisagreement)
    first = command.reads[0] if command.reads else None
    return [_suspend(state, SuspensionReason.SOURCES_DISAGREE, command.detail, first)]


# The pit boss's decisions ---------------------------------------------------------------------------------------------


def _check_pit_boss(state: TableState, command: c.Command) -> None:
    if command.actor.kind is not Role.PIT_BOSS:
        raise _refuse(state, command, f"only a pit boss may decide, not {command.actor}")
    # The dealer on duty is logged as the dealer change named them: "dealer:ann", or "ann".
    if state.dealer is not None and command.actor.name == Actor.parse(state.dealer, bare=Role.DEALER).name:
        raise _refuse(state, command, "the dealer on duty cannot resolve an error at their own table")


def _correct_card(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    assert isinstance(command, c.CorrectCard) and state.suspension is not None
    _check_pit_boss(state, command)
    if not command.reason.strip():
        raise _refuse(state, command, "a correction needs a reason")
    suspension = state.suspension
    by = str(command.actor)
    round_number = state.round.number if state.round is not None else None
    game_id = state.round.game_id if state.round is not None else None
    if command.position == 0:
        if suspension.read is None:
            raise _refuse(state, command, "no card read is waiting: the suspension was not caused by a read")
        if suspension.resume not in (Phase.DEALING, Phase.BURNING):
            raise _refuse(state, command, f"the read came in phase {suspension.resume.value}, where no card is due")
        if suspension.resume is Phase.DEALING and state.round is not None and state.round.next_side is None:
            raise _refuse(state, command, "the deal is complete: the read has no place in it")
        original = suspension.corrected or suspension.read.card
        return [e.CardCorrected(round_number, 0, original, command.card, command.reason, by, game_id)]
    if state.round is None or not 1 <= command.position <= len(state.round.dealt):
        count = len(state.round.dealt) if state.round is not None else 0
        raise _refuse(state, command, f"position {command.position} is not a card of this round (1 to {count})")
    side, original_card = state.round.dealt[command.position - 1]
    dealt = list(state.round.dealt)
    dealt[command.position - 1] = (side, command.card)
    try:
        nxt = next_recipient([card for s, card in dealt if s is Side.PLAYER],
                             [card for s, card in dealt if s is Side.BANKER])  # fmt: skip
    except InvalidDeal as error:
        raise _refuse(state, command, f"with {command.card.code} the cards already dealt break the rules ({error}); "
                                      "void the round instead") from None  # fmt: skip
    if nxt is None and (suspension.resume is not Phase.DEALING or suspension.corrected is not None):
        waiting = "a burn is under way" if suspension.resume is not Phase.DEALING else "the corrected read waits"
        raise _refuse(state, command, f"with {command.card.code} the deal would be complete while {waiting}; "
                                      "continue first or void the round")  # fmt: skip
    return [e.CardCorrected(round_number, command.position, original_card, command.card, command.reason, by, game_id)]


def _continue_play(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    assert isinstance(command, c.ContinuePlay) and state.suspension is not None
    _check_pit_boss(state, command)
    suspension = state.suspension
    continued = e.PlayContinued(str(command.actor), command.reason)
    decision = e.Resumption.CORRECTED if suspension.corrections else e.Resumption.CONTINUED
    follow: list[e.Event] = [continued, e.TableResumed(decision)]
    resumed = evolve(state, continued)
    # The read that suspended the table, once the pit boss has named the card, counts as drawn in its place.
    read = suspension.read
    if suspension.corrected is not None and read is not None:
        if suspension.resume is Phase.BURNING:
            follow += _burn_card(resumed, read, suspension.corrected)
        else:
            follow += _deal_card(resumed, read, suspension.corrected)
    elif suspension.resume is Phase.DEALING and resumed.round is not None:
        follow += _complete_if_dealt(resumed, resumed.round)  # a correction may have completed the deal
    if suspension.resume in (Phase.AWAITING_SHUFFLE, Phase.AWAITING_CUT, Phase.CLOSED):
        return follow  # the shuffle's own burn follows; a closed table burns when it opens and shuffles
    if any(isinstance(event, e.ShoeEnded) for event in follow):
        return follow
    burn = _burn(state, BurnReason.ERROR, command.actor)
    if not burn and suspension.resume is Phase.BETTING_OPEN:  # no error burn: betting goes on at once
        return follow + _reopen_betting(resumed, now)
    return follow + burn  # betting, if it comes next, is given back once this burn is done (`_burn_read`)


def _void_round(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    assert isinstance(command, c.VoidRound) and state.suspension is not None
    _check_pit_boss(state, command)
    if state.round is None:
        raise _refuse(state, command, "no round is in play; continue instead")
    if not command.reason.strip():
        raise _refuse(state, command, "a void needs a reason")
    voided = e.RoundVoided(state.round.number, state.round.game_id, command.reason, str(command.actor))
    resumed = e.TableResumed(e.Resumption.VOIDED)
    if is_last_hand(state, state.round.number):
        return [voided, resumed, _shoe_ended(state, voids=1)]
    return [voided, resumed, *_burn(state, BurnReason.ERROR, command.actor)]


def _close_table(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    assert isinstance(command, c.CloseTable)
    _check_pit_boss(state, command)
    if not command.reason.strip():
        raise _refuse(state, command, "closing a table needs a reason")
    return [e.TableClosed(command.reason, str(command.actor), state.phase.value)]


def _open_table(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    _check_pit_boss(state, command)
    return [e.TableOpened(str(command.actor))]


# Seats (seed 004) -----------------------------------------------------------------------------------------------------

NICKNAME_LENGTH = 32


def _plays(seat: Seat, round_number: int) -> bool:
    """Whether the seated player takes part in round `round_number`: seated before it opened, neither passed nor sat
    out."""
    return seat.first_round <= round_number and round_number not in (seat.passed, seat.sat_out)


def seat_of(state: TableState, player_id: str) -> Seat | None:
    return next((seat for seat in state.seats if seat.player_id == player_id), None)


def _game_server_seat(state: TableState, command: c.Command, player_id: str) -> Seat:
    """The player's seat, which only the game server that seated them may move."""
    _check_game_server(state, command)
    seat = seat_of(state, player_id)
    if seat is None:
        raise _refuse(state, command, f"{player_id} has no seat at this table")
    if seat.game_server != command.actor.name:
        raise _refuse(state, command, f"{player_id} was seated by another game server")
    return seat


def _check_game_server(state: TableState, command: c.Command) -> None:
    if command.actor.kind is not Role.GAME_SERVER:
        raise _refuse(state, command, f"players are seated by their game server, not by {command.actor}")


def _between_rounds_for(state: TableState, command: c.Command, seat: Seat) -> None:
    """A player who takes part in the round under way keeps their seat until it ends."""
    current = state.round
    if current is not None and _plays(seat, current.number):
        raise _refuse(state, command, f"{seat.player_id} plays round {current.number}, under way: seats change only "
                                      "between rounds (once its result or void is in)")  # fmt: skip


def _free_seat(state: TableState, command: c.Command, wanted: int | None) -> int:
    seats = state.config.seats
    if not seats:
        raise _refuse(state, command, "this table has no seats (table.seats)")
    taken = {seat.number for seat in state.seats}
    if wanted is None:
        free = [number for number in range(1, seats + 1) if number not in taken]
        if not free:
            raise _refuse(state, command, f"every seat of this table is taken ({seats} seats)")
        return free[0]
    if not 1 <= wanted <= seats:
        raise _refuse(state, command, f"seat {wanted} does not exist: this table has seats 1 to {seats}")
    if wanted in taken:
        raise _refuse(state, command, f"seat {wanted} is taken")
    return wanted


def _nickname(state: TableState, command: c.Command, text: str) -> str:
    """The nickname as the table is shown it: printable text, 1 to 32 characters once trimmed, used by nobody else
    seated at the table (whatever the case)."""
    nickname = "".join(ch for ch in unicodedata.normalize("NFKC", text) if ch.isprintable()).strip()
    if not 1 <= len(nickname) <= NICKNAME_LENGTH:
        raise _refuse(state, command, f"a nickname is 1 to {NICKNAME_LENGTH} printable characters")
    if any(seat.nickname.casefold() == nickname.casefold() for seat in state.seats):
        raise _refuse(state, command, f"the nickname {nickname!r} is in use at this table")
    return nickname


def _take_seat(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    assert isinstance(command, c.TakeSeat)
    _check_game_server(state, command)
    if not state.config.seats:
        raise _refuse(state, command, "this table has no seats (table.seats)")
    if not command.player_id.strip():
        raise _refuse(state, command, "name the player taking the seat")
    seated = seat_of(state, command.player_id)
    if seated is not None:
        raise _refuse(state, command, f"{command.player_id} sits in seat {seated.number} already: change seats instead")
    nickname = _nickname(state, command, command.nickname)
    number = _free_seat(state, command, command.seat)
    # The next round to open is the first the player plays: one taken mid-round waits for the next (seed 004).
    return [e.SeatTaken(number, command.player_id, command.actor.name, nickname, state.rounds_started + 1)]


def _change_seat(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    assert isinstance(command, c.ChangeSeat)
    seat = _game_server_seat(state, command, command.player_id)
    if command.seat == seat.number:
        return []  # sits there already (a retry)
    _between_rounds_for(state, command, seat)
    number = _free_seat(state, command, command.seat)
    return [e.SeatChanged(seat.number, number, seat.player_id, seat.nickname)]


def _leave_seat(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    assert isinstance(command, c.LeaveSeat)
    seat = _game_server_seat(state, command, command.player_id)
    _between_rounds_for(state, command, seat)
    return [e.SeatLeft(seat.number, seat.player_id, seat.nickname)]


def _pass_round(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    assert isinstance(command, c.PassRound) and state.round is not None
    current = state.round
    seat = _game_server_seat(state, command, command.player_id)
    if current.number < seat.first_round:
        raise _refuse(state, command, f"{seat.player_id} took their seat during round {current.number}: they play "
                                      f"from round {seat.first_round}")  # fmt: skip
    if seat.passed == current.number:
        return []  # passed already (a retry)
    if now >= current.closes_at:
        raise _refuse(state, command, f"betting time is over: too late to pass round {current.number}")
    if command.open_bets:
        raise _refuse(state, command, f"{seat.player_id} has {command.open_bets} open bet(s) in round "
                                      f"{current.number}: undo them to pass")  # fmt: skip
    return [e.RoundPassed(current.number, current.game_id, seat.number, seat.player_id, seat.nickname)]


_SEATING: dict[type[c.Command], Handler] = {c.TakeSeat: _take_seat, c.ChangeSeat: _change_seat,
                                            c.LeaveSeat: _leave_seat}  # fmt: skip


def _seating(phase: Phase) -> dict[type[c.Command], Move]:
    """Seats are taken, changed and left in every phase; none of it moves the table."""
    return {command: _move(handler, phase) for command, handler in _SEATING.items()}


# ---------------------------------------------------------------------------------------------------------------------
# The procedure: for each phase, every command it accepts, the handler that decides what follows, and every phase the
# table can be in once those events are applied. Anything else is refused, with the phase's commands as the hint.


class Move(NamedTuple):
    handler: Handler
    leads_to: frozenset[Phase]


def _move(handler: Handler, *leads_to: Phase) -> Move:
    return Move(handler, frozenset(leads_to))


AWAITING_SHUFFLE, AWAITING_CUT, BURNING, READY = Phase.AWAITING_SHUFFLE, Phase.AWAITING_CUT, Phase.BURNING, Phase.READY
BETTING_OPEN, DEALING, SUSPENDED, CLOSED = Phase.BETTING_OPEN, Phase.DEALING, Phase.SUSPENDED, Phase.CLOSED
RESUMABLE = (AWAITING_SHUFFLE, AWAITING_CUT, BURNING, READY, BETTING_OPEN, DEALING, CLOSED)  # what a suspension ends in

_ERRORS_IN_PLAY: dict[type[c.Command], Move] = {
    c.DeclareError: _move(_declare_error, SUSPENDED),
    c.ReportSourceFailure: _move(_source_failed, SUSPENDED),
    c.ReportDisagreement: _move(_report_disagreement, SUSPENDED),
}

TRANSITIONS: dict[Phase, dict[type[c.Command], Move]] = {
    AWAITING_SHUFFLE: {
        c.ConfirmShuffle:       _move(_confirm_shuffle, AWAITING_CUT),
        c.InspectDecks:         _move(_inspect_decks, AWAITING_SHUFFLE),  # then the next inspection, or the shuffle
        c.ReplaceDeck:          _move(_replace_deck, AWAITING_SHUFFLE),
        c.ChangeDealer:         _move(_change_dealer, AWAITING_SHUFFLE),
        c.DrawCard:             _move(_card_not_due, SUSPENDED),
        c.CloseTable:           _move(_close_table, CLOSED),
        **_seating(AWAITING_SHUFFLE),
    },
    AWAITING_CUT: {
        c.PlaceCutCard:         _move(_place_cut_card, BURNING, READY),  # READY at once when the burn is of none
        c.ChangeDealer:         _move(_change_dealer, AWAITING_CUT),
        c.DrawCard:             _move(_card_not_due, SUSPENDED),
        **_seating(AWAITING_CUT),
    },
    BURNING: {
        c.DrawCard:             _move(_burn_read, BURNING, READY, BETTING_OPEN, DEALING, SUSPENDED),  # burn's end
        c.ReportCutCard:        _move(_report_cut_card, BURNING),
        **_ERRORS_IN_PLAY,
        **_seating(BURNING),
    },
    READY: {
        c.OpenBetting:          _move(_open_betting, BETTING_OPEN),
        c.ChangeDealer:         _move(_change_dealer, READY, BURNING),  # burn 1 for the new dealer
        c.DrawCard:             _move(_card_not_due, SUSPENDED),
        c.ReportCutCard:        _move(_report_cut_card, READY),  # the next round is the last hand
        c.CloseTable:           _move(_close_table, CLOSED),
        c.OrderShuffle:         _move(_order_shuffle, AWAITING_SHUFFLE),  # the shoe ends after a completed round
        **_ERRORS_IN_PLAY,
        c.ReportSourceFailure:  _move(_source_failed_between_rounds, READY),
        **_seating(READY),
    },
    BETTING_OPEN: {
        c.CloseBetting:         _move(_close_betting, DEALING),
        c.DrawCard:             _move(_card_while_betting, SUSPENDED),
        c.ReportCutCard:        _move(_report_cut_card, BETTING_OPEN),
        **_ERRORS_IN_PLAY,
        **_seating(BETTING_OPEN),
        c.PassRound:            _move(_pass_round, BETTING_OPEN),
    },
    DEALING: {
        c.DrawCard:             _move(_deal_read, DEALING, READY, AWAITING_SHUFFLE, SUSPENDED),  # the last card
        c.ReportCutCard:        _move(_report_cut_card, DEALING),                                # of the shoe's
        **_ERRORS_IN_PLAY,                                                                       # last hand
        **_seating(DEALING),
    },
    SUSPENDED: {
        c.CorrectCard:          _move(_correct_card, SUSPENDED),
        c.ContinuePlay:         _move(_continue_play, *RESUMABLE),  # then the error burn, or the deal goes on
        c.VoidRound:            _move(_void_round, BURNING, READY, AWAITING_SHUFFLE),
        c.DrawCard:             _move(_card_while_suspended, SUSPENDED),
        c.ReportCutCard:        _move(_report_cut_card, SUSPENDED),
        **_seating(SUSPENDED),
    },
    CLOSED: {
        c.OpenTable:            _move(_open_table, AWAITING_SHUFFLE, READY),  # where it was closed
        c.DrawCard:             _move(_card_not_due, SUSPENDED),
        **_seating(CLOSED),
    },
}  # fmt: skip


def expected_commands(phase: Phase) -> tuple[str, ...]:
    return tuple(command.__name__ for command in TRANSITIONS[phase])


def decide(state: TableState, command: c.Command, now: datetime) -> list[e.Event]:
    """The events that follow from `command` in `state` at time `now` (UTC). Raises `ProcedureError`, changing nothing,
    if the procedure does not allow it."""
    move = TRANSITIONS[state.phase].get(type(command))
    if move is None:
        raise _refuse(state, command, "not allowed now")
    return move.handler(state, command, now)


# ---------------------------------------------------------------------------------------------------------------------
# evolve: the state after an event. Pure bookkeeping; every check happened in decide.


def _count(seen: tuple[int, ...], card: Card, change: int) -> tuple[int, ...]:
    counts = list(seen)  # one copy to change and one back: fewer objects than slicing and joining
    counts[card.index] += change
    return tuple(counts)


def _set_for_source(pairs: tuple[tuple[str, Any], ...], source: str, value: Any) -> tuple[tuple[str, Any], ...]:
    """`pairs` with `source`'s value replaced by `value` (None: removed), the source then last."""
    if len(pairs) == 1 and pairs[0][0] == source:  # a table with one device
        pairs = ()
    elif pairs:
        pairs = tuple(pair for pair in pairs if pair[0] != source)
    if value is None:
        return pairs
    return ((source, value),) if not pairs else (*pairs, (source, value))


# Where fields sit in a `TableState`. The transitions made for every card and round set them in a list of the state's
# fields (`_read_taken`, `_with_phase`): `_replace` builds a dict of keywords and passes over all the fields with it,
# which cost a card's `evolve` more than all the rest of it.
_FIELD = {name: position for position, name in enumerate(TableState._fields)}
_PHASE, _ROUNDS_STARTED, _CARDS_DRAWN, _SEEN, _LAST_DEVICE_SEQ, _DEVICE_SESSIONS = (
    _FIELD[name] for name in ("phase", "rounds_started", "cards_drawn", "seen", "last_device_seq", "device_sessions")
)
_BURN, _ROUND, _SUSPENSION, _COUNTS, _LAST_RESULT = (
    _FIELD[name] for name in ("burn", "round", "suspension", "counts", "last_result")
)
_ROUNDS, _DEALT, _BURNED = (ShoeCounts._fields.index(name) for name in ("rounds", "dealt", "burned"))
_new = tuple.__new__  # `_new(TableState, fields)`: `_make` without its length check (`fields` is a whole state's)


def _read_taken(state: TableState, read: c.CardRead, phase: Phase, counted: int) -> list[Any]:
    """A card left the shoe and was accepted: the state's fields, as a list, with the card counted (in `seen`, in
    `cards_drawn` and in the shoe's count at position `counted`), the device's sequence number remembered and the
    table in `phase`."""
    assert read.card is not None, "only a read card is accepted"
    last_seq, sessions = state.last_device_seq, state.device_sessions
    if read.device_seq is not None:
        last_seq = _set_for_source(last_seq, read.source, read.device_seq)
        if sessions or read.device_session is not None:
            sessions = _set_for_source(sessions, read.source, read.device_session)
    counts = list(state.counts)
    counts[counted] += 1
    fields = list(state)
    fields[_PHASE] = phase
    fields[_CARDS_DRAWN] = state.cards_drawn + 1
    fields[_SEEN] = _count(state.seen, read.card, 1)
    fields[_LAST_DEVICE_SEQ] = last_seq
    fields[_DEVICE_SESSIONS] = sessions
    fields[_COUNTS] = _new(ShoeCounts, counts)
    return fields


def _with_phase(state: TableState, phase: Phase) -> TableState:
    """`state._replace(phase=phase)`, for the phase changes of every round."""
    fields = list(state)
    fields[_PHASE] = phase
    return _new(TableState, fields)


def _start_burn(state: TableState, event: e.BurnRequired) -> TableState:
    if state.phase is Phase.BURNING and state.burn is not None:
        # An error during a burn adds its cards to the burn under way.
        burn = state.burn._replace(
            remaining=state.burn.remaining + event.count, approved_by=event.approved_by or state.burn.approved_by
        )
    else:
        # After the burn, play resumes in the round it interrupted, or between rounds.
        then = state.phase if state.phase in (Phase.BETTING_OPEN, Phase.DEALING) else Phase.READY
        burn = Burn(event.reason, event.count, then, event.approved_by)
    return state._replace(phase=Phase.BURNING, burn=burn)


def evolve(state: TableState, event: e.Event) -> TableState:
    match event:  # the events of every round first: each case costs the events after it a type check
        case e.CardDealt(side=side, read=read):
            assert state.round is not None and read.card is not None
            fields = _read_taken(state, read, Phase.DEALING, _DEALT)
            fields[_ROUND] = state.round.with_card(side, read.card)
            return _new(TableState, fields)
        case e.BettingOpened():
            fields = list(state)
            fields[_PHASE] = Phase.BETTING_OPEN
            fields[_ROUNDS_STARTED] = event.round
            fields[_ROUND] = Round(event.round, event.game_id, event.opened_at, event.closes_at)
            return _new(TableState, fields)
        case e.BettingClosed():
            return _with_phase(state, Phase.DEALING)
        case e.RoundCompleted():
            tally = list(state.counts)
            tally[_ROUNDS] += 1
            fields = list(state)
            fields[_PHASE] = Phase.READY
            fields[_ROUND] = fields[_SUSPENSION] = None
            fields[_COUNTS] = _new(ShoeCounts, tally)
            fields[_LAST_RESULT] = event
            return _new(TableState, fields)
        case e.CardBurned(read=read):
            assert state.burn is not None
            fields = _read_taken(state, read, Phase.BURNING, _BURNED)
            fields[_BURN] = state.burn._replace(remaining=state.burn.remaining - 1)
            return _new(TableState, fields)
        case e.BurnCompleted():
            assert state.burn is not None
            return state._replace(phase=state.burn.then, burn=None)
        case e.BettingReopened(closes_at=closes):
            assert state.round is not None
            return state._replace(round=state.round._replace(closes_at=closes))
        case e.TableSuspended():
            resume = state.phase
            cause = event.read
            counts = state.counts
            if cause is not None:
                counts = counts._replace(set_aside=counts.set_aside + 1)
            suspension = Suspension(event.reason, event.detail, resume, cause)
            return state._replace(phase=Phase.SUSPENDED, suspension=suspension, counts=counts,
                           cards_drawn=state.cards_drawn + (1 if cause is not None else 0))  # fmt: skip
        case e.CardReadWhileSuspended():
            counts = state.counts._replace(set_aside=state.counts.set_aside + 1)
            return state._replace(counts=counts, cards_drawn=state.cards_drawn + 1)
        case e.CardCorrected(position=position, corrected=card):
            counts = state.counts._replace(corrections=state.counts.corrections + 1)
            assert state.suspension is not None
            suspension = state.suspension._replace(corrections=state.suspension.corrections + 1)
            if position == 0:
                # The set-aside read becomes the corrected card; it is counted again when it is dealt or burned.
                return state._replace(suspension=suspension._replace(corrected=card), counts=counts)
            assert state.round is not None
            dealt = list(state.round.dealt)
            side, old = dealt[position - 1]
            dealt[position - 1] = (side, card)
            seen = _count(_count(state.seen, old, -1), card, 1)
            return state._replace(
                round=state.round.with_dealt(tuple(dealt)), counts=counts, seen=seen, suspension=suspension
            )
        case e.PlayContinued():
            assert state.suspension is not None
            suspension = state.suspension
            if suspension.corrected is not None and suspension.read is not None:
                # The set-aside read comes back as the corrected card: un-count it here, it is dealt or burned next.
                counts = state.counts._replace(set_aside=state.counts.set_aside - 1)
                return state._replace(
                    phase=suspension.resume, suspension=None, counts=counts, cards_drawn=state.cards_drawn - 1
                )
            return state._replace(phase=suspension.resume, suspension=None)
        case e.RoundVoided():
            counts = state.counts._replace(voids=state.counts.voids + 1)
            if state.burn is not None:  # voided during its error burn: finish that burn, then READY
                burn = state.burn._replace(then=Phase.READY)
                return state._replace(phase=Phase.BURNING, burn=burn, round=None, counts=counts, suspension=None)
            return state._replace(phase=Phase.READY, round=None, counts=counts, suspension=None)
        case e.BurnRequired():
            return _start_burn(state, event)
        case e.CutCardAppeared(last_round=last):
            return state._replace(last_round=last)
        case e.TableClosed(reopens_in=phase):
            return state._replace(phase=Phase.CLOSED, reopens_in=Phase(phase))
        case e.TableOpened():
            return state._replace(phase=state.reopens_in or Phase.AWAITING_SHUFFLE, reopens_in=None)
        case e.LogOutage() | e.TableResumed():
            return state  # a fact about the log; a notice of what the pit boss's decision already applied
        case e.DealerChanged(dealer=dealer):
            return state._replace(dealer=dealer)
        case e.ShuffleConfirmed(shoe=shoe, dealer=dealer):
            return state._replace(phase=Phase.AWAITING_CUT, shoe=shoe, dealer=state.dealer or dealer)
        case e.CutCardPlaced(cards_in_front=position):
            return state._replace(cut_position=position, cards_drawn=0, seen=(0,) * len(ALL_CARDS), last_round=None,
                         counts=ShoeCounts(), last_device_seq=(), device_sessions=())  # fmt: skip
        case e.DecksInspected(stage=InspectionStage.START, shoe=shoe):
            return state._replace(start_inspected=shoe)
        case e.DecksInspected(stage=InspectionStage.END, shoe=shoe):
            return state._replace(end_inspected=shoe)
        case e.ShuffleOrdered() | e.DeckReplaced():
            return state  # the ShoeEnded that follows ends the shoe; the inspection that follows approves the deck
        case e.ShoeEnded():
            return state._replace(phase=Phase.AWAITING_SHUFFLE, round=None, burn=None, suspension=None,
                           cut_position=None)  # fmt: skip
        case e.SeatTaken(seat=number, player_id=player, game_server=server, nickname=nickname, first_round=first):
            return _seated(state, (*state.seats, Seat(number, player, server, nickname, first)))
        case e.SeatChanged(player_id=player, seat=number):
            return _seated(state, tuple(s._replace(number=number) if s.player_id == player else s for s in state.seats))
        case e.SeatLeft(player_id=player):
            return state._replace(seats=tuple(seat for seat in state.seats if seat.player_id != player))
        case e.RoundPassed(player_id=player, round=number):
            return _seated(state, tuple(s._replace(passed=number) if s.player_id == player else s for s in state.seats))
        case e.PlayerSatOut(player_id=player, round=number):
            return _seated(state, tuple(s._replace(sat_out=number) if s.player_id == player else s
                                        for s in state.seats))  # fmt: skip
    raise TypeError(f"evolve does not know {type(event).__name__}")


def _seated(state: TableState, seats: tuple[Seat, ...]) -> TableState:
    return state._replace(seats=tuple(sorted(seats)))  # by seat number (each seat holds one player)


def replay(state: TableState, events: list[e.Event]) -> TableState:
    for event in events:
        state = evolve(state, event)
    return state
