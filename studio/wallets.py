"""Wallets, bets and the ledger: every stake and every payout, in integer minor units, in the studio's database.

Rules held here:
- A balance changes only by ledger entries (deposit, stake, win, push, refund, commission), each referencing its
  round's game number and bet; a wallet's balance always equals the sum of its entries.
- A bet is identified by the game server's bet id: placing it twice is placing it once (idempotent).
- A round is settled in one transaction that writes every bet's verdict, every ledger entry and the round's
  settlement mark together; a round with the mark is never settled again, so a crash during settlement recovers to
  exactly once. Nothing is deleted: an undone bet is marked cancelled and its stake refunded by an entry.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Index, bindparam, func, insert, select, update
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError
from sqlmodel import Field, SQLModel

from studio.database import BIG_INTEGER, WRITE_OPTION, database_errors, open_engine
from studio.domain.errors import BetRejected, StudioError
from studio.domain.paytable import BetType, Verdict
from studio.domain.player_banker import BankCover
from studio.domain.settlement import Bet, Settlement
from studio.ports import Clock
from studio.schema import migrate


class WalletError(StudioError):
    """A wallet operation that cannot be done (unknown player, insufficient balance, ...)."""


class BankCannotCover(BetRejected):
    """A bet the player's bank could not pay at worst, with the other bets of the round (seed 001)."""

    def __init__(self, bet_type: str, stake: int, balance: int, needed: int) -> None:
        self.balance, self.needed = balance, needed
        super().__init__(bet_type, stake, f"the bank cannot cover this bet: it holds {balance} and would need {needed}")


@dataclass(frozen=True, slots=True)
class BankAgainst:
    """The player bank a bet is placed against, and how to tell what that bank must hold."""

    player_id: str
    cover: BankCover


class WalletRow(SQLModel, table=True):
    __tablename__ = "wallet"
    player_id: str = Field(primary_key=True)
    game_server: str
    balance: int = Field(default=0, sa_type=BIG_INTEGER)


class LedgerRow(SQLModel, table=True):
    __tablename__ = "ledger_entry"
    id: int | None = Field(default=None, primary_key=True, sa_type=BIG_INTEGER)
    player_id: str = Field(index=True)
    kind: str  # deposit, stake, win, push, refund, commission
    amount: int = Field(sa_type=BIG_INTEGER)  # signed minor units: what the entry adds to the balance
    game_id: str | None = Field(default=None, index=True)
    bet_id: str | None = None
    at: str


class BetRow(SQLModel, table=True):
    __tablename__ = "bet"
    bet_id: str = Field(primary_key=True)
    game_server: str
    player_id: str = Field(index=True)
    table_id: str
    game_id: str = Field(index=True)
    bet_type: str
    stake: int = Field(sa_type=BIG_INTEGER)
    status: str = "open"  # open, cancelled, settled
    verdict: str | None = None
    returned: int | None = Field(default=None, sa_type=BIG_INTEGER)
    commission: int | None = Field(default=None, sa_type=BIG_INTEGER)
    placed_at: str
    placed_order: int = Field(default=0, index=True, sa_type=BIG_INTEGER)  # the order bets arrived in, for "undo"
    settled_at: str | None = None


class SettledRound(SQLModel, table=True):
    __tablename__ = "settled_round"
    game_id: str = Field(primary_key=True)
    outcome: str  # "result" or "void"
    at: str


class BankerSeat(SQLModel, table=True):
    """Who holds the bank at a table in player-banker mode (a row per table while someone does)."""

    __tablename__ = "banker_seat"
    table_id: str = Field(primary_key=True)
    player_id: str
    game_server: str
    auto_approve: bool = False
    since: str


class BankerApproval(SQLModel, table=True):
    __tablename__ = "banker_approval"
    game_id: str = Field(primary_key=True)
    player_id: str
    at: str


_TABLES = [WalletRow, LedgerRow, BetRow, SettledRound, BankerSeat, BankerApproval]
_W, _L, _B, _S, _SEAT, _OK = (model.__table__ for model in _TABLES)  # type: ignore[attr-defined]
Index("bet_player_game", _B.c.player_id, _B.c.game_id)


@dataclass(frozen=True, slots=True)
class PlacedBet:
    bet_id: str
    game_server: str
    player_id: str
    table_id: str
    game_id: str
    bet_type: BetType
    stake: int
    status: str = "open"

    def as_bet(self) -> Bet:
        return Bet(self.bet_id, self.bet_type, self.stake)


def _placed(row: Any) -> PlacedBet:
    return PlacedBet(row.bet_id, row.game_server, row.player_id, row.table_id, row.game_id, BetType(row.bet_type),
                     row.stake, row.status)  # fmt: skip


@database_errors
class WalletStore:
    def __init__(self, url: str, clock: Clock) -> None:
        self._engine = open_engine(make_url(url))
        self._writer = self._engine.execution_options(**{WRITE_OPTION: True})  # BEGIN IMMEDIATE on SQLite
        self._clock = clock
        migrate(self._engine)

    def close(self) -> None:
        self._engine.dispose()

    def _now(self) -> str:
        return self._clock.now().isoformat()

    # Wallets.

    def deposit(self, player_id: str, game_server: str, amount: int, reference: str | None = None) -> int:
        """Credit a player's wallet (opening it if new); return the new balance."""
        if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
            raise WalletError(f"a deposit is a positive whole number of minor units, not {amount!r}")
        with self._writer.begin() as conn:
            owner = conn.execute(select(_W.c.game_server).where(_W.c.player_id == player_id)).scalar()
            if owner is None:
                conn.execute(insert(_W).values(player_id=player_id, game_server=game_server, balance=0))
            elif owner != game_server:
                raise WalletError(f"player {player_id!r} belongs to another game server")
            conn.execute(insert(_L).values(player_id=player_id, kind="deposit", amount=amount, game_id=None,
                                           bet_id=reference, at=self._now()))  # fmt: skip
            conn.execute(update(_W).where(_W.c.player_id == player_id).values(balance=_W.c.balance + amount))
            return int(conn.execute(select(_W.c.balance).where(_W.c.player_id == player_id)).scalar_one())

    def owner(self, player_id: str) -> str:
        """The game server a player belongs to."""
        with self._engine.connect() as conn:
            value = conn.execute(select(_W.c.game_server).where(_W.c.player_id == player_id)).scalar()
        if value is None:
            raise WalletError(f"no wallet for player {player_id!r}")
        return str(value)

    def balance(self, player_id: str) -> int:
        with self._engine.connect() as conn:
            value = conn.execute(select(_W.c.balance).where(_W.c.player_id == player_id)).scalar()
        if value is None:
            raise WalletError(f"no wallet for player {player_id!r}")
        return int(value)

    def ledger_sum(self, player_id: str) -> int:
        with self._engine.connect() as conn:
            return int(conn.execute(select(func.coalesce(func.sum(_L.c.amount), 0)).where(
                _L.c.player_id == player_id)).scalar_one())  # fmt: skip

    def entries(self, player_id: str) -> list[dict[str, Any]]:
        with self._engine.connect() as conn:
            rows = conn.execute(select(_L).where(_L.c.player_id == player_id).order_by(_L.c.id))
            return [dict(row._mapping) for row in rows]

    # Bets.

    def place(self, bet: PlacedBet, bank: BankAgainst | None = None) -> PlacedBet:
        """Record a bet and take its stake, or return the same bet if its id was placed already.

        Against a player's `bank`, the bet is taken only if that bank's balance covers the worst outcome of every open
        bet of the round with this one (checked in the same transaction, the bank's wallet locked)."""
        with self._writer.begin() as conn:
            existing = conn.execute(select(_B).where(_B.c.bet_id == bet.bet_id)).first()
            if existing is not None:
                same = _placed(existing)
                if (same.player_id, same.game_id, same.bet_type, same.stake) != (
                    bet.player_id, bet.game_id, bet.bet_type, bet.stake):  # fmt: skip
                    raise BetRejected(bet.bet_type.value, bet.stake, f"bet id {bet.bet_id!r} was used for another bet")
                return same
            wallet = conn.execute(select(_W.c.balance, _W.c.game_server).where(_W.c.player_id == bet.player_id)).first()
            if wallet is None or wallet.game_server != bet.game_server:
                raise BetRejected(bet.bet_type.value, bet.stake, f"no wallet for player {bet.player_id!r}")
            if wallet.balance < bet.stake:
                raise BetRejected(bet.bet_type.value, bet.stake, f"balance {wallet.balance} is less than the stake")
            held = conn.execute(select(_SEAT.c.table_id).where(_SEAT.c.player_id == bet.player_id)).scalar()
            if held is not None:  # a bank's balance answers for its bets: its holder does not bet anywhere meanwhile
                reason = f"{bet.player_id} holds the bank at {held} and cannot bet while holding it"
                raise BetRejected(bet.bet_type.value, bet.stake, reason)
            if bank is not None:
                self._check_cover(conn, bet, bank)
            now = self._now()
            order = conn.execute(select(func.coalesce(func.max(_B.c.placed_order), 0))).scalar_one() + 1
            row = {"bet_id": bet.bet_id, "game_server": bet.game_server, "player_id": bet.player_id,
                   "table_id": bet.table_id, "game_id": bet.game_id, "bet_type": bet.bet_type.value,
                   "stake": bet.stake, "status": "open", "placed_at": now, "placed_order": order}  # fmt: skip
            conn.execute(insert(_B).values(**row))
            conn.execute(insert(_L).values(player_id=bet.player_id, kind="stake", amount=-bet.stake,
                                           game_id=bet.game_id, bet_id=bet.bet_id, at=now))  # fmt: skip
            conn.execute(update(_W).where(_W.c.player_id == bet.player_id).values(balance=_W.c.balance - bet.stake))
        return bet

    def _check_cover(self, conn: Any, bet: PlacedBet, bank: BankAgainst) -> None:
        balance = conn.execute(select(_W.c.balance).where(_W.c.player_id == bank.player_id).with_for_update()).scalar()
        query = (select(_B.c.bet_type, func.sum(_B.c.stake), func.count()).where(_B.c.game_id == bet.game_id,
                 _B.c.status == "open").group_by(_B.c.bet_type))  # fmt: skip
        stakes: Counter[BetType] = Counter({bet.bet_type: bet.stake})
        count = 1
        for bet_type, staked, bets in conn.execute(query):
            stakes[BetType(bet_type)] += int(staked)
            count += int(bets)
        needed = bank.cover.exposure(stakes, count)
        if balance is None or balance < needed:
            raise BankCannotCover(bet.bet_type.value, bet.stake, balance or 0, needed)

    def cancel(self, bet_id: str) -> PlacedBet:
        """Undo an open bet: marked cancelled, its stake refunded by a ledger entry."""
        with self._writer.begin() as conn:
            row = conn.execute(select(_B).where(_B.c.bet_id == bet_id)).first()
            if row is None or row.status != "open":
                raise WalletError(f"no open bet {bet_id!r} to undo")
            conn.execute(update(_B).where(_B.c.bet_id == bet_id).values(status="cancelled", settled_at=self._now()))
            conn.execute(insert(_L).values(player_id=row.player_id, kind="refund", amount=row.stake,
                                           game_id=row.game_id, bet_id=bet_id, at=self._now()))  # fmt: skip
            conn.execute(update(_W).where(_W.c.player_id == row.player_id).values(balance=_W.c.balance + row.stake))
        return _placed(row)

    def bets(self, game_id: str, player_id: str | None = None, status: str | None = None) -> list[PlacedBet]:
        query = select(_B).where(_B.c.game_id == game_id)
        if player_id is not None:
            query = query.where(_B.c.player_id == player_id)
        if status is not None:
            query = query.where(_B.c.status == status)
        with self._engine.connect() as conn:
            return [_placed(row) for row in conn.execute(query.order_by(_B.c.placed_order))]

    def bet_rows(self, player_id: str) -> list[dict[str, Any]]:
        with self._engine.connect() as conn:
            rows = conn.execute(select(_B).where(_B.c.player_id == player_id).order_by(_B.c.placed_order))
            return [dict(row._mapping) for row in rows]

    def totals(self, game_id: str) -> dict[str, int]:
        """Stakes per bet type for a round, as the table shows them."""
        query = (select(_B.c.bet_type, func.sum(_B.c.stake)).where(_B.c.game_id == game_id, _B.c.status != "cancelled")
                 .group_by(_B.c.bet_type))  # fmt: skip
        with self._engine.connect() as conn:
            return {bet_type: int(total) for bet_type, total in conn.execute(query)}

    # Settlement.

    def outcomes(self, game_server: str, after: int = 0, limit: int = 1000) -> list[dict[str, Any]]:
        """Settled bets of a game server's players, in the order they were settled, after ledger entry `after`."""
        query = (
            select(_L.c.id, _B.c.bet_id, _B.c.player_id, _B.c.game_id, _B.c.table_id, _B.c.bet_type, _B.c.stake,
                   _B.c.verdict, _B.c.returned, _B.c.commission, _B.c.settled_at)
            .join(_B, _B.c.bet_id == _L.c.bet_id)
            .where(_L.c.id > after, _L.c.kind.in_(("win", "lose", "push", "refund")), _B.c.game_server == game_server,
                   _B.c.status == "settled")
            .order_by(_L.c.id).limit(limit)
        )  # fmt: skip
        with self._engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]

    def settled_rounds(self) -> set[str]:
        with self._engine.connect() as conn:
            return set(conn.execute(select(_S.c.game_id)).scalars())

    def is_settled(self, game_id: str) -> bool:
        with self._engine.connect() as conn:
            return conn.execute(select(_S.c.game_id).where(_S.c.game_id == game_id)).first() is not None

    # The bank, at tables in player-banker mode.

    def banker(self, table_id: str) -> dict[str, Any] | None:
        with self._engine.connect() as conn:
            row = conn.execute(select(_SEAT).where(_SEAT.c.table_id == table_id)).first()
        return None if row is None else dict(row._mapping)

    def take_bank(self, table_id: str, player_id: str, game_server: str, auto_approve: bool, required: int) -> None:
        with self._writer.begin() as conn:
            if conn.execute(select(_SEAT.c.player_id).where(_SEAT.c.table_id == table_id)).first() is not None:
                raise WalletError(f"table {table_id} already has a banker")
            held = conn.execute(select(_SEAT.c.table_id).where(_SEAT.c.player_id == player_id)).scalar()
            if held is not None:
                raise WalletError(f"{player_id} already holds the bank at {held}: one bank at a time")
            if conn.execute(select(_B.c.bet_id).where(_B.c.player_id == player_id, _B.c.status == "open")).first():
                raise WalletError(f"{player_id} has bets waiting for a result: take the bank once they are settled")
            wallet = conn.execute(select(_W.c.balance, _W.c.game_server).where(_W.c.player_id == player_id)).first()
            if wallet is None or wallet.game_server != game_server:
                raise WalletError(f"no wallet for player {player_id!r}")
            if wallet.balance < required:
                raise WalletError(f"holding the bank needs a balance of {required}; {player_id} has {wallet.balance}")
            conn.execute(insert(_SEAT).values(table_id=table_id, player_id=player_id, game_server=game_server,
                                              auto_approve=auto_approve, since=self._now()))  # fmt: skip

    def leave_bank(self, table_id: str, player_id: str) -> None:
        """Give the bank back to the house, between rounds: not while bets of a round it approved are open."""
        with self._writer.begin() as conn:
            approved = select(_OK.c.game_id).where(_OK.c.player_id == player_id)
            if conn.execute(select(_B.c.bet_id).where(_B.c.game_id.in_(approved), _B.c.table_id == table_id,
                                                      _B.c.status == "open")).first():  # fmt: skip
                raise WalletError(f"{player_id} holds the bank for a round in play: leave it once the round is settled")
            done = conn.execute(_SEAT.delete().where(_SEAT.c.table_id == table_id, _SEAT.c.player_id == player_id))
            if done.rowcount == 0:
                raise WalletError(f"{player_id} does not hold the bank at {table_id}")

    def approve(self, game_id: str, player_id: str) -> None:
        with self._writer.begin() as conn:
            if conn.execute(select(_OK.c.game_id).where(_OK.c.game_id == game_id)).first() is None:
                conn.execute(insert(_OK).values(game_id=game_id, player_id=player_id, at=self._now()))

    def approver(self, game_id: str) -> str | None:
        """The banker who approved the round, if one did."""
        with self._engine.connect() as conn:
            value = conn.execute(select(_OK.c.player_id).where(_OK.c.game_id == game_id)).scalar()
        return None if value is None else str(value)

    def settle(self, game_id: str, outcome: str, settlements: Sequence[Settlement],
               owners: dict[str, str], bank: tuple[str, int, int] | None = None) -> bool:  # fmt: skip
        """Write a round's settlements in one transaction; False (and nothing written) if it was settled already.

        `owners` maps each bet id to its player. Ledger: a win returns stake + gross win as "win" and takes the
        commission as "commission"; a push or refund returns the stake; a loss writes nothing (the stake was taken).
        """
        now = self._now()
        entries: list[dict[str, Any]] = []
        updates: list[dict[str, Any]] = []
        delta: dict[str, int] = defaultdict(int)
        for settled in settlements:
            player = owners[settled.bet.bet_id]
            # One outcome entry per bet (a loss too, for nothing: the stake was taken when the bet was placed), so
            # that every bet's settlement has its place, in order, in the ledger that game servers read.
            kind = {Verdict.WIN: "win", Verdict.PUSH: "push", Verdict.REFUND: "refund"}.get(settled.verdict, "lose")
            entries.append({"player_id": player, "kind": kind, "amount": settled.returned + settled.commission,
                            "game_id": game_id, "bet_id": settled.bet.bet_id, "at": now})  # fmt: skip
            if settled.commission:
                entries.append({"player_id": player, "kind": "commission", "amount": -settled.commission,
                                "game_id": game_id, "bet_id": settled.bet.bet_id, "at": now})  # fmt: skip
            delta[player] += settled.returned
            updates.append({"b_id": settled.bet.bet_id, "verdict": settled.verdict.value, "returned": settled.returned,
                            "commission": settled.commission, "settled_at": now})  # fmt: skip
        if bank is not None:
            banker, gross, bank_commission = bank
            entries.append({"player_id": banker, "kind": "bank", "amount": gross, "game_id": game_id, "bet_id": None,
                            "at": now})  # fmt: skip
            if bank_commission:
                entries.append({"player_id": banker, "kind": "bank_commission", "amount": -bank_commission,
                                "game_id": game_id, "bet_id": None, "at": now})  # fmt: skip
            delta[banker] += gross - bank_commission
        try:
            with self._writer.begin() as conn:
                conn.execute(insert(_S).values(game_id=game_id, outcome=outcome, at=now))  # the mark goes first
                if entries:
                    conn.execute(insert(_L), entries)
                if updates:
                    conn.execute(
                        update(_B).where(_B.c.bet_id == bindparam("b_id")).values(
                            status="settled", verdict=bindparam("verdict"), returned=bindparam("returned"),
                            commission=bindparam("commission"), settled_at=bindparam("settled_at")),
                        updates,
                    )  # fmt: skip
                changes = [{"p_id": player, "amount": amount} for player, amount in delta.items() if amount]
                if changes:
                    conn.execute(update(_W).where(_W.c.player_id == bindparam("p_id"))
                                 .values(balance=_W.c.balance + bindparam("amount")), changes)  # fmt: skip
        except IntegrityError:
            return False  # the settlement mark exists: settled before (or by a racing writer)
        return True


def owners_of(bets: Iterable[PlacedBet]) -> dict[str, str]:
    return {bet.bet_id: bet.player_id for bet in bets}
