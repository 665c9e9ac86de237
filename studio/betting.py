"""Taking bets for a round and settling them: the table's limits and policies, the betting window, exactly-once
settlement.

Rules held here:
- Bets are taken only while betting is open and its timer runs: "no more bets" comes before the first card, so
  every bet is committed before any card is drawn. A late bet is rejected with that reason.
- Each bet is checked against the table's limits (per player and bet type, for the round: the sum of their stakes
  on that type), the under-minimum and over-maximum policies, at most `max_bets_per_area` bets per area (seed 000
  §2.1.1), the player's own maximum (seed 004), and the player's balance, all in the transaction that places it
  (`WalletStore.place_all`). Bets asked for together (a 2 Way chip, a double, a repeat) are placed all or none.
- At a table banked by a player, a bet is taken only while the bank covers the worst outcome of every bet of the
  round (`player_banker.BankCover`); a player holding a bank does not bet anywhere.
- Undo takes back the player's last open bet of the round; double adds the same stakes once, capped at the maximum
  (each doubled area is one more bet on it); repeat places the player's bets of their previous round again, only
  before their first bet of this round (seed 002).
- A final result settles every bet of the round by the pay table; a void refunds every stake.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from studio.domain.cards import Card
from studio.domain.errors import BetRejected, ConfigError
from studio.domain.limits import TableLimits
from studio.domain.paytable import SHORTCUTS, BetType, PayTable
from studio.domain.player_banker import BankCover, bank_result
from studio.domain.procedure import Phase, TableState
from studio.domain.records import Record
from studio.domain.rules import Outcome, outcome
from studio.domain.settlement import Void, expand_shortcut, settle
from studio.ports import Clock
from studio.wallets import BankAgainst, BankCannotCover, PlacedBet, WalletError, WalletStore, owners_of

LATE = "betting is closed: bets are committed before the first card is drawn"


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

    def _open_round(self, state: TableState, player_id: str | None = None) -> str:
        if state.phase is not Phase.BETTING_OPEN or state.round is None or self.clock.now() >= state.round.closes_at:
            raise BettingClosed
        game_id = state.round.game_id
        if self.player_banker:
            seat = self.wallets.banker(self.table_id)
            if seat is None:
                raise BetRejected("bet", 0, "nobody holds the bank at this table")
            if player_id == seat["player_id"]:
                raise BetRejected("bet", 0, "the banker cannot bet against their own bank")
            if self.wallets.approver(game_id) is None:
                if not seat["auto_approve"]:
                    raise BetRejected("bet", 0, "the banker has not approved this round yet")
                self.wallets.approve(game_id, seat["player_id"])
        return game_id

    def approve_round(self, state: TableState, player_id: str) -> str:
        """The banker approves the round in betting: bets may be taken."""
        seat = self.wallets.banker(self.table_id)
        if seat is None or seat["player_id"] != player_id:
            raise BetRejected("approval", 0, f"{player_id} does not hold the bank at this table")
        if state.phase is not Phase.BETTING_OPEN or state.round is None:
            raise BettingClosed
        self.wallets.approve(state.round.game_id, player_id)
        return state.round.game_id

    def _take(self, bets: list[PlacedBet], repeat: bool = False, cap: bool = False) -> list[PlacedBet]:
        """Place bets of one player on the current round, all or none, under the table's rules."""
        try:
            return self.wallets.place_all(bets, self._against(bets[0].game_id), self.limits, repeat, cap)
        except BankCannotCover as short:
            money = self.limits.money
            raise BetRejected(
                short.bet_type,
                short.stake,
                f"the bank cannot cover this bet: it holds {money(short.balance)}, "
                f"and paying every bet of this round at worst would need {money(short.needed)}",
            ) from None

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
        game_id = self._open_round(state, player_id)
        name = bet_type.strip().lower().replace(" ", "_").replace("-", "_")
        if name in SHORTCUTS or name in ("2_way", "3_way", "2way", "3way"):
            wanted = [(b.bet_id, b.bet_type, b.stake) for b in expand_shortcut(bet_id, bet_type, stake)]
        else:
            try:
                wanted = [(bet_id, BetType.parse(bet_type), stake)]
            except ConfigError as error:  # a game server's input, not the studio's configuration
                raise BetRejected(bet_type, stake, str(error)) from None
        return self._take([PlacedBet(i, game_server, player_id, self.table_id, game_id, t, s) for i, t, s in wanted])

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
        return self.wallets.settle(game_id, kind, settlements, owners_of(bets), bank)

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
