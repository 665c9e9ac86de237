"""Taking bets for a round and settling them: the table's limits and policies, the betting window, exactly-once
settlement.

Rules held here:
- Bets are taken only while betting is open and its timer runs: "no more bets" comes before the first card, so
  every bet is committed before any card is drawn. A late bet is rejected with that reason.
- Each bet is checked against the table's limits (per player and bet type, for the round: the sum of their stakes
  on that type), the under-minimum and over-maximum policies, at most `max_bets_per_area` bets per area (seed 000
  §2.1.1), the player's own maximum (seed 004), and the player's balance, all in the transaction that places it
  (`WalletStore.place_all`). Bets asked for together (a 2 Way chip, a double, a repeat) are placed all or none.
- At a table with seats, only a seated player bets, in a round they play (`seats.bet_refusal`, seed 004).
- At a table banked by a player, a bet is taken only while the bank covers the worst outcome of every bet of the
  round (`player_banker.BankCover`); a player holding a bank does not bet anywhere. A player takes the bank between
  rounds with the balance and the credit points it needs; while nobody holds it, the house banks the table (seed
  001: playing as banker is optional). A banker who has not approved a round by its approval deadline loses the bank
  (`expire_approval`, run by the studio's timer and checked again by every bet and approval).
- A disconnect (seed 001): bets placed before "no more bets" are refunded; after it, the round plays out. A banker
  who disconnects after approving the round keeps the bank until that round is settled; before, loses it at once.
- Undo takes back the player's last open bet of the round; double adds the same stakes once, capped at the maximum
  (each doubled area is one more bet on it); repeat places the player's bets of their previous round again, only
  before their first bet of this round (seed 002).
- A final result settles every bet of the round by the pay table; a void refunds every stake.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from studio.domain.cards import Card
from studio.domain.errors import BetRejected, ConfigError
from studio.domain.limits import TableLimits
from studio.domain.paytable import SHORTCUTS, BetType, PayTable
from studio.domain.player_banker import APPROVAL_SECONDS, BankCover, approval_deadline, bank_result, required_bank
from studio.domain.procedure import Phase, TableState
from studio.domain.records import Record
from studio.domain.rules import Outcome, outcome
from studio.domain.seats import bet_refusal
from studio.domain.settlement import Void, expand_shortcut, settle
from studio.ports import Clock
from studio.wallets import BankAgainst, BankCannotCover, PlacedBet, Placement, WalletError, WalletStore, owners_of

LATE = "betting is closed: bets are committed before the first card is drawn"


@dataclass(frozen=True, slots=True)
class BetRequest:
    """A game server's request for a bet (or a 2 Way / 3 Way shortcut) of one of its players. `arrived`: when it
    reached the studio, if it waits to be placed (a group commit); None: placed now."""

    game_server: str
    player_id: str
    bet_id: str
    bet_type: str
    stake: int
    arrived: datetime | None = None


class BettingClosed(BetRejected):
    """A bet, undo, double or repeat that arrived after "no more bets" (or while no round is open)."""

    def __init__(self) -> None:
        super().__init__("bet", 0, LATE)

    def __str__(self) -> str:
        return LATE


@dataclass
class BettingService:
    table_id: str
    wallets: WalletStore
    limits: TableLimits
    pay_table: PayTable
    clock: Clock
    player_banker: bool = False  # one player holds the bank (seed 001) instead of the house
    bank_min_points: int = 0  # the credit points a player needs to take the bank (seed 001: 50)
    approval_seconds: int = APPROVAL_SECONDS  # the banker's time to approve a round (seed 001: 35)

    def _open_round(self, state: TableState, player_id: str | None = None, arrived: datetime | None = None) -> str:
        """The round taking bets (`BettingClosed` if none is), checked for the player. `arrived`: when a request
        waiting for a group commit reached the studio (the timer is checked at that instant; the phase now)."""
        now = self.clock.now() if arrived is None else arrived
        if state.phase is not Phase.BETTING_OPEN or state.round is None or now >= state.round.closes_at:
            raise BettingClosed
        game_id = state.round.game_id
        unseated = None if player_id is None else bet_refusal(state, player_id)  # at a table with seats (seed 004)
        if unseated is not None:
            raise BetRejected("bet", 0, unseated)
        if self.player_banker:
            self.expire_approval(state)
            seat = self.wallets.banker(self.table_id)
            if seat is None:
                return game_id  # nobody holds the bank: the house banks the round
            if player_id == seat["player_id"]:
                raise BetRejected("bet", 0, "the banker cannot bet against their own bank")
            if self.wallets.approver(game_id) is None:
                if not seat["auto_approve"]:
                    raise BetRejected("bet", 0, "the banker has not approved this round yet")
                if seat["release_after"] is not None:
                    raise BetRejected("bet", 0, "the banker disconnected: the bank goes back to the house")
                try:
                    self.wallets.approve(game_id, seat["player_id"], self.table_id)
                except WalletError as error:
                    raise BetRejected("bet", 0, str(error)) from None
        return game_id

    def approve_round(self, state: TableState, player_id: str) -> str:
        """The banker approves the round in betting: bets may be taken. Refused once the approval time ran out (the
        bank then went back to the house)."""
        timed_out = self.expire_approval(state)
        if timed_out == player_id:
            assert state.round is not None
            reason = (f"the time to approve {state.round.game_id} ran out: {player_id} no longer holds the bank, which "
                      "went back to the house")  # fmt: skip
            raise BetRejected("approval", 0, reason)
        seat = self.wallets.banker(self.table_id)
        if seat is None or seat["player_id"] != player_id:
            raise BetRejected("approval", 0, f"{player_id} does not hold the bank at this table")
        if state.phase is not Phase.BETTING_OPEN or state.round is None or self.clock.now() >= state.round.closes_at:
            raise BettingClosed
        try:
            self.wallets.approve(state.round.game_id, player_id, self.table_id)
        except WalletError as error:
            raise BetRejected("approval", 0, str(error)) from None
        return state.round.game_id

    def take_bank(self, state: TableState, game_server: str, player_id: str, auto_approve: bool) -> int:
        """A player takes the bank, between rounds, with the balance (`required_bank`) and the credit points it needs;
        returns the balance required."""
        if state.phase in (Phase.BETTING_OPEN, Phase.DEALING):
            raise WalletError("the bank changes hands only between rounds")
        required = required_bank(self.limits)
        self.wallets.take_bank(self.table_id, player_id, game_server, auto_approve, required, self.bank_min_points)
        return required

    def approval_deadline(self, state: TableState) -> datetime | None:
        """When the banker loses the bank if the round under way is not approved (None: no round)."""
        if state.round is None:
            return None
        return approval_deadline(state.round.opened_at, state.round.closes_at, self.approval_seconds)

    def expire_approval(self, state: TableState) -> str | None:
        """Send the bank back to the house if its holder has not approved the round under way by its deadline (the
        studio's timer calls this on the table's writer; bets and approvals check it too). Not for a bank with
        auto-approve, a bank taken after the round opened, or while the table is suspended. Returns the player who
        lost the bank, None if nobody did."""
        deadline = self.approval_deadline(state) if self.player_banker and not state.suspended else None
        if deadline is None or self.clock.now() < deadline:
            return None
        assert state.round is not None
        seat = self.wallets.banker(self.table_id)
        if seat is None or seat["auto_approve"] or seat["release_after"] is not None:
            return None
        if state.round.opened_at < datetime.fromisoformat(seat["since"]):
            return None  # taken after this round opened: its first round to approve is the next
        if self.wallets.approver(state.round.game_id) is not None:
            return None
        game_id, player = state.round.game_id, seat["player_id"]
        detail = (f"did not approve {game_id} within {self.approval_seconds} s of its betting opening, nor before "
                  "betting closed: the bank goes back to the house")  # fmt: skip
        return player if self.wallets.expire_bank(self.table_id, player, seat["since"], game_id, detail) else None

    def disconnect(self, state: TableState, player_id: str, by: str) -> dict[str, Any] | None:
        """A game server reports that the player disconnected (seed 001). Their bets on a round still taking bets are
        refunded; after "no more bets" the round plays out. A banker who approved the round under way keeps the bank
        until it is settled; otherwise the bank goes back to the house now. Returns what it did at this table (None:
        nothing concerned the player here)."""
        game_id = None if state.round is None else state.round.game_id
        bank = self.wallets.release_bank(self.table_id, player_id, game_id, by) if self.player_banker else None
        refunded: list[PlacedBet] = []
        plays_out: list[PlacedBet] = []
        open_bets = [] if game_id is None else self.wallets.bets(game_id, player_id, status="open")
        if open_bets and self._taking_bets(state):
            assert game_id is not None
            refunded = self.wallets.refund_on_disconnect(game_id, player_id, self.table_id, by)
        elif open_bets:
            plays_out = open_bets
            detail = "disconnected after no more bets: the round plays out"
            self.wallets.record_disconnect(player_id, self.table_id, game_id, detail, by)
        if bank is None and not open_bets:
            return None
        return {"table_id": self.table_id, "game_id": game_id, "refunded": refunded, "bank": bank,
                "plays_out": plays_out}  # fmt: skip

    def _taking_bets(self, state: TableState) -> bool:
        return (state.phase is Phase.BETTING_OPEN and state.round is not None
                and self.clock.now() < state.round.closes_at)  # fmt: skip

    def _take(self, bets: list[PlacedBet], repeat: bool = False, cap: bool = False) -> list[PlacedBet]:
        """Place bets of one player on the current round, all or none, under the table's rules."""
        try:
            return self.wallets.place_all(bets, self._against(bets[0].game_id), self.limits, repeat, cap)
        except BankCannotCover as short:
            raise self._uncovered(short) from None

    def _uncovered(self, short: BankCannotCover) -> BetRejected:
        money = self.limits.money
        return BetRejected(short.bet_type, short.stake, f"the bank cannot cover this bet: it holds "
                           f"{money(short.balance)}, and paying every bet of this round at worst would need "
                           f"{money(short.needed)}")  # fmt: skip

    @cached_property
    def _cover(self) -> BankCover:
        return BankCover.of(self.pay_table)

    def _against(self, game_id: str) -> BankAgainst | None:
        """The player bank this round's bets are placed against, if the table is banked by a player."""
        banker = self.wallets.approver(game_id) if self.player_banker else None
        return None if banker is None else BankAgainst(banker, self._cover)

    def place(self, state: TableState, game_server: str, player_id: str, bet_id: str, bet_type: str,
              stake: int) -> list[PlacedBet]:  # fmt: skip
        """Place a bet (or a 2 Way / 3 Way shortcut, which places one bet per covered type)."""
        return self._take(self._wanted(state, BetRequest(game_server, player_id, bet_id, bet_type, stake)))

    def _wanted(self, state: TableState, request: BetRequest) -> list[PlacedBet]:
        """The bets a request asks for on the round taking bets (`BetRejected` if it cannot be taken at all)."""
        game_id = self._open_round(state, request.player_id, request.arrived)
        bet_id, bet_type, stake = request.bet_id, request.bet_type, request.stake
        name = bet_type.strip().lower().replace(" ", "_").replace("-", "_")
        if name in SHORTCUTS or name in ("2_way", "3_way", "2way", "3way"):
            wanted = [(b.bet_id, b.bet_type, b.stake) for b in expand_shortcut(bet_id, bet_type, stake)]
        else:
            try:
                wanted = [(bet_id, BetType.parse(bet_type), stake)]
            except ConfigError as error:  # a game server's input, not the studio's configuration
                raise BetRejected(bet_type, stake, str(error)) from None
        return [PlacedBet(i, request.game_server, request.player_id, self.table_id, game_id, t, s)
                for i, t, s in wanted]  # fmt: skip

    def place_many(self, state: TableState, requests: Sequence[BetRequest]) -> list[list[PlacedBet] | BetRejected]:
        """Place many requests at once, in one transaction (a group commit: `bet_batches.BetBatches`), each as
        `place` would, in order: a refused request gets its `BetRejected` in its place and changes nothing, the
        others are placed. Every rule is checked per request, in the transaction, against the requests before it."""
        results: list[list[PlacedBet] | BetRejected | None] = []
        placements: list[Placement] = []
        for request in requests:
            try:
                bets = self._wanted(state, request)
                placements.append(Placement(bets, self._against(bets[0].game_id), self.limits))
                results.append(None)
            except BetRejected as refused:
                results.append(refused)
        placed = iter(self.wallets.place_batch(placements))
        answers: list[list[PlacedBet] | BetRejected] = []
        for result in results:
            answer = next(placed) if result is None else result
            answers.append(self._uncovered(answer) if isinstance(answer, BankCannotCover) else answer)
        return answers

    def undo_last(self, state: TableState, player_id: str) -> PlacedBet:
        game_id = self._open_round(state)
        open_bets = self.wallets.bets(game_id, player_id, status="open")
        if not open_bets:
            raise WalletError(f"player {player_id!r} has no bet to undo in this round")
        return self.wallets.cancel(open_bets[-1].bet_id)

    def double(self, state: TableState, game_server: str, player_id: str) -> list[PlacedBet]:
        game_id = self._open_round(state, player_id)
        open_bets = self.wallets.bets(game_id, player_id, status="open")
        if not open_bets:
            raise WalletError(f"player {player_id!r} has no bet to double in this round")
        if any(bet.bet_id.endswith(":double") for bet in open_bets):
            raise BetRejected("double", 0, "the bets of this round were doubled already")
        stakes: Counter[BetType] = Counter()
        for bet in open_bets:
            stakes[bet.bet_type] += bet.stake
        doubled = [PlacedBet(f"{game_id}:{player_id}:{bet_type.value}:double", game_server, player_id, self.table_id,
                             game_id, bet_type, stake) for bet_type, stake in stakes.items()]  # fmt: skip
        return self._take(doubled, cap=True)  # capped at the maximum: the table's or the player's own

    def repeat(self, state: TableState, game_server: str, player_id: str, previous_game_id: str) -> list[PlacedBet]:
        game_id = self._open_round(state, player_id)
        previous = [b for b in self.wallets.bets(previous_game_id, player_id) if b.status != "cancelled"]
        if not previous:
            raise WalletError(f"player {player_id!r} had no bets in {previous_game_id}")
        again = [PlacedBet(f"{game_id}:{player_id}:repeat:{n}", game_server, player_id, self.table_id, game_id,
                           bet.bet_type, bet.stake) for n, bet in enumerate(previous)]  # fmt: skip
        return self._take(again, repeat=True)

    def settle_round(self, game_id: str, outcome: Outcome | Void) -> bool:
        """Settle (or refund) every open bet of the round, once; False if it was settled before."""
        if self.wallets.is_settled(game_id):
            return False
        bets = self.wallets.bets(game_id, status="open")
        settlements = settle([bet.as_bet() for bet in bets], outcome, self.pay_table, self.limits)
        kind = "void" if isinstance(outcome, Void) else "result"
        bank = None
        banker = self.wallets.approver(game_id) if self.player_banker else None
        if banker is not None:
            result = bank_result(settlements, self.pay_table.commission_rounding)
            bank = (banker, result.gross, result.commission)
        unit = 10**self.limits.minor_digits  # credit points: one per whole major unit (seed 001)
        return self.wallets.settle(game_id, kind, settlements, owners_of(bets), bank, unit)

    def settle_record(self, record: Record) -> bool:
        """Settle the round a logged result or void closes; False if the record closes none or it was settled."""
        data = record.data
        if record.kind == "RoundCompleted":
            player, banker = ([Card.parse(code) for code in data[side]] for side in ("player", "banker"))
            return self.settle_round(data["game_id"], outcome(player, banker))
        if record.kind == "RoundVoided":
            return self.settle_round(data["game_id"], Void(data["reason"]))
        return False

    def settle_unsettled(self, records: Iterable[Record]) -> int:
        """After a crash: settle every round the log closed but the ledger did not; return how many."""
        settled = self.wallets.settled_rounds()
        closing = (r for r in records if r.kind in ("RoundCompleted", "RoundVoided"))
        return sum(self.settle_record(record) for record in closing if record.data["game_id"] not in settled)
