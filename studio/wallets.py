"""Wallets, bets and the ledger: every stake and every payout, in integer minor units, in the studio's database.

Rules held here:
- A balance changes only by ledger entries (deposit, stake, win, push, refund, commission), each referencing its
  round's game number and bet; a wallet's balance always equals the sum of its entries.
- A bet is identified by the game server's bet id: placing it twice is placing it once (idempotent).
- A round is settled in one transaction that writes every bet's verdict, every ledger entry and the round's
  settlement mark together; a round with the mark is never settled again, so a crash during settlement recovers to
  exactly once. Nothing is deleted: an undone bet is marked cancelled and its stake refunded by an entry.
- What a bet must fit is checked in the transaction that places it, against what that transaction reads: the player's
  bets on the round (the table maximum per area, at most `max_bets_per_area` bets per area, "repeat" only before the
  first bet), the player's own maximum, their balance, and the cover of a player's bank. Several bets asked for at
  once (a 2 Way chip, a double, a repeat) are placed all together or not at all.
- A player's own maximum stake is kept as insert-only history (`own_maximum`): its last row is in force, and a new
  one is written at most once a week, confirmed by the player's PIN (kept hashed: studio/pins.py).
- Credit points (seed 001) change only with the settlement that earns or deducts them: each outcome entry carries the
  points its bet earned, the bank's entry the points it is deducted; a wallet's points always equal the sum of its
  entries' points. What happens to a bank or a player outside a bet (bank taken, left, timed out, released; a
  disconnect and what it refunded) is kept in `player_event`, insert only, naming who did it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from sqlalchemy import Index, bindparam, func, insert, select, update
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError
from sqlmodel import Field, SQLModel

from studio.database import BIG_INTEGER, WRITE_OPTION, database_errors, open_engine
from studio.domain.errors import BetRejected, StudioError
from studio.domain.limits import MAXIMUM_REACHED, RAISED, MaximumReached, TableLimits, next_own_maximum_change
from studio.domain.paytable import BetType, Verdict
from studio.domain.player_banker import BankCover, points_for
from studio.domain.settlement import Bet, Settlement
from studio.pins import hash_pin, verify_pin
from studio.ports import Clock
from studio.schema import migrate

OWNERS_REMEMBERED = 200_000  # players whose game server a store keeps in memory (some tens of MB at most)


class WalletError(StudioError):
    """A wallet operation that cannot be done (unknown player, insufficient balance, ...)."""


class WrongPin(WalletError):
    """A PIN that is not the player's (or a player who has none yet)."""


class OwnMaximumRefused(WalletError):
    """A change of a player's own maximum that the rules refuse (once a week; a PIN set first)."""


class OtherGameServer(BetRejected):
    """A bet for a player whose wallet belongs to another game server: a game server acts only for its own players."""

    def __init__(self, bet_type: str, stake: int, player_id: str) -> None:
        super().__init__(bet_type, stake, f"player {player_id!r} belongs to another game server")

    def __str__(self) -> str:
        return self.reason


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
    points: int = Field(default=0, sa_type=BIG_INTEGER)  # credit points (seed 001): the sum of its entries' points


class LedgerRow(SQLModel, table=True):
    __tablename__ = "ledger_entry"
    id: int | None = Field(default=None, primary_key=True, sa_type=BIG_INTEGER)
    player_id: str = Field(index=True)
    kind: str  # deposit, stake, win, push, refund, commission
    amount: int = Field(sa_type=BIG_INTEGER)  # signed minor units: what the entry adds to the balance
    game_id: str | None = Field(default=None, index=True)
    bet_id: str | None = None
    at: str
    points: int = Field(default=0, sa_type=BIG_INTEGER)  # the credit points the entry adds (seed 001)


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
    requested: int | None = Field(default=None, sa_type=BIG_INTEGER)  # the stake asked for (None: before 0004)


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
    release_after: str | None = None  # the holder disconnected: the bank is released once this round is settled


class BankerApproval(SQLModel, table=True):
    __tablename__ = "banker_approval"
    game_id: str = Field(primary_key=True)
    player_id: str
    at: str


class PlayerPin(SQLModel, table=True):
    """A player's PIN, as its salted scrypt hash (studio/pins.py), never the PIN itself."""

    __tablename__ = "player_pin"
    player_id: str = Field(primary_key=True)
    pin_hash: str
    set_at: str


class OwnMaximum(SQLModel, table=True):
    """Each change of a player's own maximum stake (seed 004), insert only: the player's last row is in force."""

    __tablename__ = "own_maximum"
    id: int | None = Field(default=None, primary_key=True, sa_type=BIG_INTEGER)
    player_id: str = Field(index=True)
    max_stake: int | None = Field(default=None, sa_type=BIG_INTEGER)  # None: the player removed their own maximum
    at: str


class PlayerEvent(SQLModel, table=True):
    """What happened to a player or their bank outside a bet, and who did it (insert only): `bank_taken`, `bank_left`,
    `bank_timed_out`, `bank_released` (after a disconnect), `disconnected`."""

    __tablename__ = "player_event"
    id: int | None = Field(default=None, primary_key=True, sa_type=BIG_INTEGER)
    player_id: str = Field(index=True)
    table_id: str | None = None
    kind: str
    game_id: str | None = None
    detail: str
    actor: str  # who did it: the game server that reported it, or "studio" for the studio's own timer
    at: str


_TABLES = [WalletRow, LedgerRow, BetRow, SettledRound, BankerSeat, BankerApproval, PlayerPin, OwnMaximum, PlayerEvent]
_W, _L, _B, _S, _SEAT, _OK, _PIN, _OWN, _EV = (model.__table__ for model in _TABLES)  # type: ignore[attr-defined]
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
    notice: str | None = field(default=None, compare=False)  # "maximum reached", "raised to the table minimum"

    def as_bet(self) -> Bet:
        return Bet(self.bet_id, self.bet_type, self.stake)


def _placed(row: Any) -> PlacedBet:
    asked = row.requested
    notice = None if asked is None or asked == row.stake else MAXIMUM_REACHED if asked > row.stake else RAISED
    return PlacedBet(row.bet_id, row.game_server, row.player_id, row.table_id, row.game_id, BetType(row.bet_type),
                     row.stake, row.status, notice)  # fmt: skip


@dataclass(frozen=True, slots=True)
class OwnMaximumState:
    """A player's own maximum stake (None: none set), when they last changed it, and when they may change it again
    (None: now)."""

    max_stake: int | None
    changed_at: datetime | None
    next_change: datetime | None


@database_errors
class WalletStore:
    def __init__(self, url: str, clock: Clock) -> None:
        self._engine = open_engine(make_url(url))
        self._writer = self._engine.execution_options(**{WRITE_OPTION: True})  # BEGIN IMMEDIATE on SQLite
        self._clock = clock
        # Each wallet's game server as read: it is written when the wallet opens and never changes, so a game
        # server's ownership of a player is checked without the database once known (`known_owner`).
        self._owners: dict[str, str] = {}
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
        known = self._owners.get(player_id)
        if known is not None:
            return known
        with self._engine.connect() as conn:
            value = conn.execute(select(_W.c.game_server).where(_W.c.player_id == player_id)).scalar()
        if value is None:
            raise WalletError(f"no wallet for player {player_id!r}")
        self._remember_owners({player_id: str(value)})
        return str(value)

    def known_owner(self, player_id: str) -> str | None:
        """The game server a player belongs to, if this store has read it already (None: not known here yet)."""
        return self._owners.get(player_id)

    def _remember_owners(self, owners: dict[str, str]) -> None:
        if len(self._owners) + len(owners) > OWNERS_REMEMBERED:
            self._owners.clear()  # a bound on memory; forgetting only costs a read
        self._owners.update(owners)

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

    def place(self, bet: PlacedBet, bank: BankAgainst | None = None, limits: TableLimits | None = None) -> PlacedBet:
        """Record a bet and take its stake, or return the same bet if its id was placed already (see `place_all`)."""
        return self.place_all([bet], bank, limits)[0]

    def place_all(self, bets: Sequence[PlacedBet], bank: BankAgainst | None = None, limits: TableLimits | None = None,
                  repeat: bool = False, cap: bool = False) -> list[PlacedBet]:  # fmt: skip
        """Record bets of one player on one round and take their stakes, all in one transaction or none; or return
        the same bets if their ids were placed already.

        Each bet's `stake` is the stake asked for. With the table's `limits`, each is checked (and its stake raised
        or cut as the table's policies say) against the player's bets of the round, their own maximum and the rule of
        at most so many bets per area, as read in this transaction. `repeat`: only if the player has no open bet on
        the round yet. `cap` (a double): each stake is cut to the room left under the maximum, and an area already at
        its maximum is left out. Against a player's `bank`, the bets are taken only if that bank's balance covers the
        worst outcome of every open bet of the round with these (the bank's wallet locked)."""
        [placed] = self.place_batch([Placement(bets, bank, limits, repeat, cap)])
        if isinstance(placed, BetRejected):
            raise placed
        return placed

    def place_batch(self, placements: Sequence[Placement]) -> list[list[PlacedBet] | BetRejected]:
        """Place many requests in one transaction: a group commit, one durable write for all of them.

        Each request is checked in its turn exactly as `place_all` checks it, against what this transaction read
        plus the requests accepted before it in the batch (their stakes taken from the balances, their bets counted
        on their areas and in the bank's cover). A refused request changes nothing and gets its `BetRejected` in its
        place of the answer; the others are placed. Nothing is written unless the whole transaction commits (an
        error of the database fails every request of the batch, none half done)."""
        for placement in placements:
            bets = placement.bets
            if not bets or len({(bet.player_id, bet.game_id) for bet in bets}) != 1:
                raise ValueError("place_all takes one or more bets of one player on one round")
        if not placements:
            return []
        with self._writer.begin() as conn:
            batch = _Batch(conn, placements, self._now())
            results: list[list[PlacedBet] | BetRejected] = []
            for placement in placements:
                try:
                    results.append(batch.place(conn, placement))
                except BetRejected as refused:
                    results.append(refused)
            batch.write(conn)
        self._remember_owners({player: wallet[1] for player, wallet in batch.wallets.items()})
        return results

    def cancel(self, bet_id: str) -> PlacedBet:
        """Undo an open bet: marked cancelled, its stake refunded by a ledger entry."""
        with self._writer.begin() as conn:
            row = conn.execute(select(_B).where(_B.c.bet_id == bet_id)).first()
            if row is None or row.status != "open":
                raise WalletError(f"no open bet {bet_id!r} to undo")
            done = conn.execute(update(_B).where(_B.c.bet_id == bet_id, _B.c.status == "open")
                                .values(status="cancelled", settled_at=self._now()))  # fmt: skip
            if done.rowcount != 1:  # refunded meanwhile (a disconnect): never refunded twice
                raise WalletError(f"no open bet {bet_id!r} to undo")
            conn.execute(insert(_L).values(player_id=row.player_id, kind="refund", amount=row.stake,
                                           game_id=row.game_id, bet_id=bet_id, at=self._now()))  # fmt: skip
            conn.execute(update(_W).where(_W.c.player_id == row.player_id).values(balance=_W.c.balance + row.stake))
        return replace(_placed(row), status="cancelled")  # the bet as it now is

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

    # A player's PIN and own maximum stake (seed 004).

    def _game_server_of(self, conn: Any, player_id: str, game_server: str) -> None:
        owner = conn.execute(select(_W.c.game_server).where(_W.c.player_id == player_id)).scalar()
        if owner is None or owner != game_server:
            raise WalletError(f"no wallet for player {player_id!r}")

    def _pin_hash(self, player_id: str) -> str | None:
        with self._engine.connect() as conn:
            value = conn.execute(select(_PIN.c.pin_hash).where(_PIN.c.player_id == player_id)).scalar()
        return None if value is None else str(value)

    def has_pin(self, player_id: str) -> bool:
        return self._pin_hash(player_id) is not None

    def set_pin(self, player_id: str, game_server: str, pin: str, current_pin: str | None = None) -> None:
        """Set a player's PIN (`BadPin` for one of the wrong form); replacing a PIN needs the current one (`WrongPin`).
        The PIN is kept only as its scrypt hash."""
        new_hash = hash_pin(pin)  # hashed outside the write transaction: it takes some tens of milliseconds
        stored = self._pin_hash(player_id)
        if stored is not None and (current_pin is None or not verify_pin(current_pin, stored)):
            raise WrongPin(f"the current PIN of {player_id} is needed to change it, and the one given is not it")
        with self._writer.begin() as conn:
            self._game_server_of(conn, player_id, game_server)
            if stored is None:
                if conn.execute(select(_PIN.c.player_id).where(_PIN.c.player_id == player_id)).first() is not None:
                    raise WrongPin(f"a PIN was set for {player_id} meanwhile: change it with the current PIN")
                conn.execute(insert(_PIN).values(player_id=player_id, pin_hash=new_hash, set_at=self._now()))
            else:
                done = conn.execute(update(_PIN).where(_PIN.c.player_id == player_id, _PIN.c.pin_hash == stored)
                                    .values(pin_hash=new_hash, set_at=self._now()))  # fmt: skip
                if done.rowcount != 1:
                    raise WrongPin(f"the PIN of {player_id} changed meanwhile: try again with the current PIN")

    def clear_pin(self, player_id: str) -> None:
        """Forget a player's PIN (a studio admin, for a player who forgot it): their game server then sets a new one."""
        with self._writer.begin() as conn:
            if conn.execute(_PIN.delete().where(_PIN.c.player_id == player_id)).rowcount == 0:
                raise WalletError(f"player {player_id!r} has no PIN")

    def _own_maximum(self, conn: Any, player_id: str) -> OwnMaximumState:
        row = conn.execute(select(_OWN.c.max_stake, _OWN.c.at).where(_OWN.c.player_id == player_id)
                           .order_by(_OWN.c.id.desc()).limit(1)).first()  # fmt: skip
        if row is None:
            return OwnMaximumState(None, None, None)
        changed = datetime.fromisoformat(row.at)
        maximum = None if row.max_stake is None else int(row.max_stake)
        return OwnMaximumState(maximum, changed, next_own_maximum_change(changed, self._clock.now()))

    def own_maximum(self, player_id: str) -> OwnMaximumState:
        """A player's own maximum stake, when it last changed and when it may change again."""
        with self._engine.connect() as conn:
            return self._own_maximum(conn, player_id)

    def set_own_maximum(self, player_id: str, game_server: str, max_stake: int | None, pin: str) -> OwnMaximumState:
        """Change a player's own maximum stake (None removes it), confirmed by their PIN, at most once a week (the week
        starts on Friday 05:00 UTC). Setting the maximum in force again changes nothing and uses up no change."""
        if max_stake is not None and (isinstance(max_stake, bool) or not isinstance(max_stake, int) or max_stake <= 0):
            raise OwnMaximumRefused(f"an own maximum is a positive whole number of minor units, not {max_stake!r}")
        stored = self._pin_hash(player_id)
        if stored is None:
            raise OwnMaximumRefused(f"{player_id} has no PIN yet: the game server sets one first, then the player "
                                    "confirms the change with it")  # fmt: skip
        if not verify_pin(pin, stored):  # outside the write transaction: scrypt takes some tens of milliseconds
            raise WrongPin(f"wrong PIN for {player_id}: the own maximum is unchanged")
        with self._writer.begin() as conn:
            self._game_server_of(conn, player_id, game_server)
            if conn.execute(select(_PIN.c.pin_hash).where(_PIN.c.player_id == player_id)).scalar() != stored:
                raise WrongPin(f"the PIN of {player_id} changed meanwhile: the own maximum is unchanged")
            state = self._own_maximum(conn, player_id)
            if state.max_stake == max_stake:
                return state
            if state.next_change is not None:
                raise OwnMaximumRefused(
                    f"{player_id} changed their own maximum this week already (at {state.changed_at:%Y-%m-%d %H:%M} "
                    f"UTC): the next change is possible from {state.next_change:%Y-%m-%d %H:%M} UTC (Friday midnight "
                    "at GMT-5)"
                )
            conn.execute(insert(_OWN).values(player_id=player_id, max_stake=max_stake, at=self._now()))
            return self._own_maximum(conn, player_id)

    # The bank, at tables in player-banker mode.

    def banker(self, table_id: str) -> dict[str, Any] | None:
        with self._engine.connect() as conn:
            row = conn.execute(select(_SEAT).where(_SEAT.c.table_id == table_id)).first()
        return None if row is None else dict(row._mapping)

    def points(self, player_id: str) -> int:
        """A player's credit points (seed 001)."""
        with self._engine.connect() as conn:
            value = conn.execute(select(_W.c.points).where(_W.c.player_id == player_id)).scalar()
        if value is None:
            raise WalletError(f"no wallet for player {player_id!r}")
        return int(value)

    def points_sum(self, player_id: str) -> int:
        with self._engine.connect() as conn:
            return int(conn.execute(select(func.coalesce(func.sum(_L.c.points), 0)).where(
                _L.c.player_id == player_id)).scalar_one())  # fmt: skip

    @staticmethod
    def _event(conn: Any, player_id: str, table_id: str | None, kind: str, game_id: str | None, detail: str, by: str,
               at: str) -> None:  # fmt: skip
        conn.execute(insert(_EV).values(player_id=player_id, table_id=table_id, kind=kind, game_id=game_id,
                                        detail=detail, actor=by, at=at))  # fmt: skip

    def events(self, player_id: str) -> list[dict[str, Any]]:
        """What happened to the player or their bank outside a bet, oldest first."""
        with self._engine.connect() as conn:
            rows = conn.execute(select(_EV).where(_EV.c.player_id == player_id).order_by(_EV.c.id))
            return [dict(row._mapping) for row in rows]

    def take_bank(self, table_id: str, player_id: str, game_server: str, auto_approve: bool, required: int,
                  min_points: int = 0) -> None:  # fmt: skip
        """`player_id` takes the bank at `table_id`: with a balance of at least `required` and `min_points` credit
        points, holding no other bank and no bet waiting for a result."""
        with self._writer.begin() as conn:
            if conn.execute(select(_SEAT.c.player_id).where(_SEAT.c.table_id == table_id)).first() is not None:
                raise WalletError(f"table {table_id} already has a banker")
            held = conn.execute(select(_SEAT.c.table_id).where(_SEAT.c.player_id == player_id)).scalar()
            if held is not None:
                raise WalletError(f"{player_id} already holds the bank at {held}: one bank at a time")
            if conn.execute(select(_B.c.bet_id).where(_B.c.player_id == player_id, _B.c.status == "open")).first():
                raise WalletError(f"{player_id} has bets waiting for a result: take the bank once they are settled")
            query = select(_W.c.balance, _W.c.points, _W.c.game_server).where(_W.c.player_id == player_id)
            wallet = conn.execute(query).first()
            if wallet is None or wallet.game_server != game_server:
                raise WalletError(f"no wallet for player {player_id!r}")
            if min_points and wallet.points < min_points:  # points may be below zero: a banker is deducted them
                raise WalletError(f"holding the bank needs {min_points} credit points; {player_id} has {wallet.points} "
                                  "(a point per whole unit staked as a player and settled)")  # fmt: skip
            if wallet.balance < required:
                raise WalletError(f"holding the bank needs a balance of {required}; {player_id} has {wallet.balance}")
            now = self._now()
            conn.execute(insert(_SEAT).values(table_id=table_id, player_id=player_id, game_server=game_server,
                                              auto_approve=auto_approve, since=now))  # fmt: skip
            detail = "auto-approve" if auto_approve else "approves each round"
            self._event(conn, player_id, table_id, "bank_taken", None, detail, game_server, now)

    def leave_bank(self, table_id: str, player_id: str, by: str = "") -> None:
        """Give the bank back to the house, between rounds: not while bets of a round it approved are open."""
        with self._writer.begin() as conn:
            approved = select(_OK.c.game_id).where(_OK.c.player_id == player_id)
            if conn.execute(select(_B.c.bet_id).where(_B.c.game_id.in_(approved), _B.c.table_id == table_id,
                                                      _B.c.status == "open")).first():  # fmt: skip
                raise WalletError(f"{player_id} holds the bank for a round in play: leave it once the round is settled")
            done = conn.execute(_SEAT.delete().where(_SEAT.c.table_id == table_id, _SEAT.c.player_id == player_id))
            if done.rowcount == 0:
                raise WalletError(f"{player_id} does not hold the bank at {table_id}")
            self._event(conn, player_id, table_id, "bank_left", None, "left the bank", by or player_id, self._now())

    def _seat(self, conn: Any, table_id: str) -> Any:
        """The table's seat, locked for the rest of the transaction (PostgreSQL; SQLite's write lock covers it)."""
        return conn.execute(select(_SEAT).where(_SEAT.c.table_id == table_id).with_for_update()).first()

    def approve(self, game_id: str, player_id: str, table_id: str | None = None) -> None:
        """The banker approves the round: bets may be placed against the bank. With `table_id`, only while the player
        holds that table's bank and no bet of the round was placed against the house (`WalletError` otherwise)."""
        with self._writer.begin() as conn:
            if table_id is not None:
                seat = self._seat(conn, table_id)
                if seat is None or seat.player_id != player_id:
                    raise WalletError(f"{player_id} does not hold the bank at {table_id}")
            if conn.execute(select(_OK.c.game_id).where(_OK.c.game_id == game_id)).first() is not None:
                return
            if table_id is not None and conn.execute(select(_B.c.bet_id).where(_B.c.game_id == game_id)).first():
                raise WalletError(f"bets of {game_id} were placed against the house already: the bank takes the next")
            conn.execute(insert(_OK).values(game_id=game_id, player_id=player_id, at=self._now()))

    def approver(self, game_id: str) -> str | None:
        """The banker who approved the round, if one did."""
        with self._engine.connect() as conn:
            value = conn.execute(select(_OK.c.player_id).where(_OK.c.game_id == game_id)).scalar()
        return None if value is None else str(value)

    def expire_bank(self, table_id: str, player_id: str, since: str, game_id: str, detail: str) -> bool:
        """The banker's approval time for `game_id` ran out: the bank goes back to the house, if `player_id` still
        holds it as taken at `since`, without auto-approve, and has not approved that round meanwhile. True if
        released."""
        with self._writer.begin() as conn:
            seat = self._seat(conn, table_id)
            if seat is None or (seat.player_id, seat.since, seat.auto_approve) != (player_id, since, False):
                return False
            if conn.execute(select(_OK.c.game_id).where(_OK.c.game_id == game_id)).first() is not None:
                return False
            conn.execute(_SEAT.delete().where(_SEAT.c.table_id == table_id))
            self._event(conn, player_id, table_id, "bank_timed_out", game_id, detail, "studio", self._now())
        return True

    def release_bank(self, table_id: str, player_id: str, game_id: str | None, by: str) -> str | None:
        """A banker disconnected: if they approved `game_id` and it is not settled yet, the round plays out and the
        bank is released once it is settled ("after_round"); otherwise it is released now ("now"). None if they do
        not hold the bank at `table_id`."""
        with self._writer.begin() as conn:
            seat = self._seat(conn, table_id)
            if seat is None or seat.player_id != player_id:
                return None
            now = self._now()
            approved = game_id is not None and conn.execute(
                select(_OK.c.player_id).where(_OK.c.game_id == game_id)).scalar() == player_id  # fmt: skip
            settled = conn.execute(select(_S.c.game_id).where(_S.c.game_id == game_id)).first() is not None
            in_play = approved and not settled
            if in_play:
                conn.execute(update(_SEAT).where(_SEAT.c.table_id == table_id).values(release_after=game_id))
                detail = f"disconnected after approving {game_id}: the round plays out, then the bank is released"
                self._event(conn, player_id, table_id, "disconnected", game_id, detail, by, now)
                return "after_round"
            conn.execute(_SEAT.delete().where(_SEAT.c.table_id == table_id))
            self._event(conn, player_id, table_id, "bank_released", game_id, "disconnected: the bank goes back to the "
                        "house", by, now)  # fmt: skip
            return "now"

    def _release_after(self, conn: Any, banker: str, game_id: str, now: str) -> None:
        """In a round's settlement: release the bank its disconnected holder kept for this round."""
        seat = conn.execute(select(_SEAT.c.table_id).where(_SEAT.c.player_id == banker,
                                                           _SEAT.c.release_after == game_id)).first()  # fmt: skip
        if seat is not None:
            conn.execute(_SEAT.delete().where(_SEAT.c.table_id == seat.table_id))
            self._event(conn, banker, seat.table_id, "bank_released", game_id, "the round its disconnected holder "
                        "approved is settled: the bank goes back to the house", "studio", now)  # fmt: skip

    def refund_on_disconnect(self, game_id: str, player_id: str, table_id: str, by: str) -> list[PlacedBet]:
        """A player disconnected before "no more bets": every open bet of theirs on the round is cancelled and its
        stake refunded, in one transaction, and the disconnect is recorded with what it refunded."""
        with self._writer.begin() as conn:
            rows = list(conn.execute(select(_B).where(_B.c.game_id == game_id, _B.c.player_id == player_id,
                                                      _B.c.status == "open").order_by(_B.c.placed_order)))  # fmt: skip
            now = self._now()
            taken_back = []
            for row in rows:
                done = conn.execute(update(_B).where(_B.c.bet_id == row.bet_id, _B.c.status == "open")
                                    .values(status="cancelled", settled_at=now))  # fmt: skip
                if done.rowcount != 1:
                    continue  # undone meanwhile (and refunded by that): never refunded twice
                conn.execute(insert(_L).values(player_id=player_id, kind="refund", amount=row.stake, game_id=game_id,
                                               bet_id=row.bet_id, at=now))  # fmt: skip
                taken_back.append(row)
            rows = taken_back
            total = sum(row.stake for row in rows)
            if total:
                conn.execute(update(_W).where(_W.c.player_id == player_id).values(balance=_W.c.balance + total))
            refunded = ", ".join(row.bet_id for row in rows) or "no bet"
            detail = f"disconnected before no more bets: refunded {refunded}"
            self._event(conn, player_id, table_id, "disconnected", game_id, detail, by, now)
        return [replace(_placed(row), status="cancelled") for row in rows]

    def record_disconnect(self, player_id: str, table_id: str | None, game_id: str | None, detail: str,
                          by: str) -> None:  # fmt: skip
        """A disconnect that refunded nothing and released no bank, recorded all the same."""
        with self._writer.begin() as conn:
            self._event(conn, player_id, table_id, "disconnected", game_id, detail, by, self._now())

    def last_round(self, player_id: str) -> dict[str, Any] | None:
        """The last settled round the player took part in (bets of theirs, or a bank of theirs): its game id, table,
        outcome ("result" or "void"), the player's role in it, their bets as settled, and what it changed: the money
        (`net`, the sum of its ledger entries, stakes included) and the credit points. None if there is none."""
        with self._engine.connect() as conn:
            query = (select(_L.c.game_id).join(_S, _S.c.game_id == _L.c.game_id)
                     .where(_L.c.player_id == player_id).order_by(_L.c.id.desc()).limit(1))  # fmt: skip
            game_id = conn.execute(query).scalar()
            if game_id is None:
                return None
            mark = conn.execute(select(_S).where(_S.c.game_id == game_id)).one()
            entries = list(conn.execute(select(_L.c.amount, _L.c.points, _L.c.kind).where(
                _L.c.player_id == player_id, _L.c.game_id == game_id)))  # fmt: skip
            bets = [dict(row._mapping) for row in conn.execute(select(_B).where(
                _B.c.game_id == game_id, _B.c.player_id == player_id).order_by(_B.c.placed_order))]  # fmt: skip
            table_id = bets[0]["table_id"] if bets else conn.execute(select(_B.c.table_id).where(
                _B.c.game_id == game_id).limit(1)).scalar()  # fmt: skip
        banked = any(entry.kind == "bank" for entry in entries)
        return {"game_id": game_id, "table_id": table_id, "outcome": mark.outcome, "settled_at": mark.at,
                "role": "banker" if banked else "player", "bets": bets,
                "net": sum(int(entry.amount) for entry in entries),
                "points": sum(int(entry.points) for entry in entries)}  # fmt: skip

    def settle(self, game_id: str, outcome: str, settlements: Sequence[Settlement], owners: dict[str, str],
               bank: tuple[str, int, int] | None = None, unit: int | None = None) -> bool:  # fmt: skip
        """Write a round's settlements in one transaction; False (and nothing written) if it was settled already.

        `owners` maps each bet id to its player. Ledger: a win returns stake + gross win as "win" and takes the
        commission as "commission"; a push or refund returns the stake; a loss writes nothing (the stake was taken).
        With `unit` (minor units per major unit), each outcome entry carries the credit points its bet earned, and the
        bank's entry the points the bank is deducted (`player_banker.points_for`). A bank whose holder disconnected
        after approving this round is released in the same transaction.
        """
        now = self._now()
        entries: list[dict[str, Any]] = []
        updates: list[dict[str, Any]] = []
        delta: dict[str, int] = defaultdict(int)
        earned: dict[str, int] = defaultdict(int)
        played = 0
        for settled in settlements:
            player = owners[settled.bet.bet_id]
            points = 0 if unit is None else points_for(settled, unit)
            # One outcome entry per bet (a loss too, for nothing: the stake was taken when the bet was placed), so
            # that every bet's settlement has its place, in order, in the ledger that game servers read.
            kind = {Verdict.WIN: "win", Verdict.PUSH: "push", Verdict.REFUND: "refund"}.get(settled.verdict, "lose")
            entries.append({"player_id": player, "kind": kind, "amount": settled.returned + settled.commission,
                            "game_id": game_id, "bet_id": settled.bet.bet_id, "at": now, "points": points})  # fmt: skip
            if settled.commission:
                entries.append({"player_id": player, "kind": "commission", "amount": -settled.commission,
                                "game_id": game_id, "bet_id": settled.bet.bet_id, "at": now, "points": 0})  # fmt: skip
            delta[player] += settled.returned
            earned[player] += points
            played += points
            updates.append({"b_id": settled.bet.bet_id, "verdict": settled.verdict.value, "returned": settled.returned,
                            "commission": settled.commission, "settled_at": now})  # fmt: skip
        if bank is not None:
            banker, gross, bank_commission = bank
            entries.append({"player_id": banker, "kind": "bank", "amount": gross, "game_id": game_id, "bet_id": None,
                            "at": now, "points": -played})  # fmt: skip
            if bank_commission:
                entries.append({"player_id": banker, "kind": "bank_commission", "amount": -bank_commission,
                                "game_id": game_id, "bet_id": None, "at": now, "points": 0})  # fmt: skip
            delta[banker] += gross - bank_commission
            earned[banker] -= played
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
                players = sorted(delta.keys() | earned.keys())
                changes = [{"p_id": player, "amount": delta[player], "pts": earned[player]} for player in players
                           if delta[player] or earned[player]]  # fmt: skip
                if changes:
                    conn.execute(update(_W).where(_W.c.player_id == bindparam("p_id"))
                                 .values(balance=_W.c.balance + bindparam("amount"),
                                         points=_W.c.points + bindparam("pts")), changes)  # fmt: skip
                if bank is not None:
                    self._release_after(conn, bank[0], game_id, now)
        except IntegrityError:
            return False  # the settlement mark exists: settled before (or by a racing writer)
        return True


@dataclass(frozen=True, slots=True)
class Placement:
    """One request's bets (one player, one round), placed all or none, and what they are checked against (see
    `WalletStore.place_all`)."""

    bets: Sequence[PlacedBet]
    bank: BankAgainst | None = None
    limits: TableLimits | None = None
    repeat: bool = False
    cap: bool = False


_CHUNK = 500  # ids per IN (...) list: well under any database's limit on a statement's parameters


def _chunks(values: Iterable[str]) -> Iterator[list[str]]:
    ordered = sorted(set(values))
    for start in range(0, len(ordered), _CHUNK):
        yield ordered[start : start + _CHUNK]


def _retried(row: Any) -> tuple[PlacedBet, int]:
    """A stored bet, and the stake that was asked for it (a retry must ask for the same)."""
    return _placed(row), int(row.stake if row.requested is None else row.requested)


# A group commit's statements, built once: SQLAlchemy then finds each one's compiled SQL in its cache, and the lists
# of ids go in as expanding parameters (`ids`, `players`, `games`), not as a new statement per group.
_BETS_BY_ID = select(_B).where(_B.c.bet_id.in_(bindparam("ids", expanding=True)))
# Each player's wallet (locked; the bank seat and own maximum are read, not locked), the table whose bank they hold
# and their own maximum in force (their last `own_maximum` row), in one statement: one list of players to send.
_EARLIER = _OWN.alias("earlier")
_LAST_OWN = (select(func.max(_EARLIER.c.id)).where(_EARLIER.c.player_id == _W.c.player_id).correlate(_W)
             .scalar_subquery())  # fmt: skip
_PLAYERS_LOCKED = (select(_W.c.player_id, _W.c.balance, _W.c.game_server, _SEAT.c.table_id.label("holding"),
                          _OWN.c.max_stake)
                   .select_from(_W.outerjoin(_SEAT, _SEAT.c.player_id == _W.c.player_id)
                                .outerjoin(_OWN, _OWN.c.id == _LAST_OWN))
                   .where(_W.c.player_id.in_(bindparam("players", expanding=True))).order_by(_W.c.player_id)
                   .with_for_update(of=_W))  # fmt: skip
_OPEN_STAKES = (select(_B.c.player_id, _B.c.game_id, _B.c.bet_type, func.sum(_B.c.stake), func.count())
                .where(_B.c.player_id.in_(bindparam("players", expanding=True)),
                       _B.c.game_id.in_(bindparam("games", expanding=True)), _B.c.status == "open")
                .group_by(_B.c.player_id, _B.c.game_id, _B.c.bet_type))  # fmt: skip
_LAST_ORDER = select(func.coalesce(func.max(_B.c.placed_order), 0))
_BANK_LOCKED = select(_W.c.balance).where(_W.c.player_id == bindparam("player")).with_for_update()
_ROUND_STAKES = (select(_B.c.bet_type, func.sum(_B.c.stake), func.count())
                 .where(_B.c.game_id == bindparam("game"), _B.c.status == "open").group_by(_B.c.bet_type))  # fmt: skip
_INSERT_BETS, _INSERT_ENTRIES = insert(_B), insert(_L)  # executed with every column's value in each row
_DEBIT = update(_W).where(_W.c.player_id == bindparam("p_id")).values(balance=_W.c.balance - bindparam("amount"))


class _Batch:
    """What a batch of placements is checked against, read in bulk at the start of its transaction (the players'
    wallets locked) and kept up to date as each request is accepted, so that every request sees those before it as
    if each had been its own transaction; and the rows the accepted ones write, at the end, together."""

    def __init__(self, conn: Any, placements: Sequence[Placement], now: str) -> None:
        self.now = now
        bets = [bet for placement in placements for bet in placement.bets]
        players = {bet.player_id for bet in bets}
        games = sorted({bet.game_id for bet in bets})
        self.known: dict[str, tuple[PlacedBet, int]] = {}  # bet id -> the bet as placed, the stake asked for it
        self.wallets: dict[str, tuple[int, str]] = {}  # player -> balance, game server
        self.holding: dict[str, str] = {}  # player -> the table whose bank they hold
        # (player, game) -> their open stakes and open bets per type on that round (read per round, not per type:
        # a request looks up only its own player's round)
        self.staked: defaultdict[tuple[str, str], Counter[BetType]] = defaultdict(Counter)
        self.count: defaultdict[tuple[str, str], Counter[BetType]] = defaultdict(Counter)
        self.own: dict[str, int | None] = {}  # player -> their own maximum stake in force
        for ids in _chunks(bet.bet_id for bet in bets):
            for row in conn.execute(_BETS_BY_ID, {"ids": ids}):
                self.known[row.bet_id] = _retried(row)
        for chunk in _chunks(players):
            for row in conn.execute(_PLAYERS_LOCKED, {"players": chunk}):
                self.wallets[row.player_id] = (int(row.balance), row.game_server)
                if row.holding is not None:
                    self.holding[row.player_id] = row.holding
                self.own[row.player_id] = row.max_stake
            open_stakes = conn.execute(_OPEN_STAKES, {"players": chunk, "games": games})
            for player, game_id, bet_type, stakes, number in open_stakes:
                self.staked[player, game_id][BetType(bet_type)] = int(stakes)
                self.count[player, game_id][BetType(bet_type)] = int(number)
        self.order = int(conn.execute(_LAST_ORDER).scalar_one())
        self.round_added: dict[str, tuple[Counter[BetType], int]] = {}  # game -> stakes, bets accepted in the batch
        self.banks: dict[str, tuple[int | None, Counter[BetType], int]] = {}  # game -> bank balance, open stakes, bets
        self.bet_rows: list[dict[str, Any]] = []
        self.entries: list[dict[str, Any]] = []
        self.debits: Counter[str] = Counter()

    def place(self, conn: Any, placement: Placement) -> list[PlacedBet]:
        """One request's bets, checked against the database and the batch so far, and taken (or `BetRejected`)."""
        bets = placement.bets
        same = self._placed_before(bets)
        if same is not None:
            return same
        first = bets[0]
        wallet = self.wallets.get(first.player_id)
        if wallet is None:
            raise BetRejected(first.bet_type.value, first.stake, f"no wallet for player {first.player_id!r}")
        if wallet[1] != first.game_server:
            raise OtherGameServer(first.bet_type.value, first.stake, first.player_id)
        held = self.holding.get(first.player_id)
        if held is not None:  # a bank's balance answers for its bets: its holder does not bet anywhere meanwhile
            reason = f"{first.player_id} holds the bank at {held} and cannot bet while holding it"
            raise BetRejected(first.bet_type.value, first.stake, reason)
        accepted = self._fit(placement)
        total = sum(bet.stake for bet in accepted)
        balance = wallet[0]
        if balance < total:
            what = "the stake" if len(accepted) == 1 else f"the stakes ({total})"
            raise BetRejected(first.bet_type.value, total, f"balance {balance} is less than {what}")
        if placement.bank is not None:
            self._check_cover(conn, accepted, placement.bank)
        self._take(accepted, {bet.bet_id: bet.stake for bet in bets})
        return accepted

    def _take(self, accepted: list[PlacedBet], asked: dict[str, int]) -> None:
        """Count the accepted bets in the batch's view and keep the rows they write."""
        first = accepted[0]
        player, game_id, now = first.player_id, first.game_id, self.now
        balance, game_server = self.wallets[player]
        total = sum(bet.stake for bet in accepted)
        self.wallets[player] = (balance - total, game_server)
        self.debits[player] += total
        staked, count = self.staked[player, game_id], self.count[player, game_id]
        stakes, number = self.round_added.get(game_id) or (Counter(), 0)
        for bet in accepted:
            self.order += 1
            bet_type, stake = bet.bet_type, bet.stake
            staked[bet_type] += stake
            count[bet_type] += 1
            stakes[bet_type] += stake
            self.known[bet.bet_id] = (bet, asked[bet.bet_id])
            self.bet_rows.append({"bet_id": bet.bet_id, "game_server": bet.game_server, "player_id": player,
                                  "table_id": bet.table_id, "game_id": game_id, "bet_type": bet_type.value,
                                  "stake": stake, "status": "open", "placed_at": now, "placed_order": self.order,
                                  "requested": asked[bet.bet_id]})  # fmt: skip
            # every column given (points too): no default worked out per row
            self.entries.append({"player_id": player, "kind": "stake", "amount": -stake, "game_id": game_id,
                                 "bet_id": bet.bet_id, "at": now, "points": 0})  # fmt: skip
        self.round_added[game_id] = (stakes, number + len(accepted))

    def write(self, conn: Any) -> None:
        """The accepted requests' bets, stake entries and balances, in the order they were accepted: one statement
        each, executed with all their rows at once."""
        if self.bet_rows:
            conn.execute(_INSERT_BETS, self.bet_rows)
            conn.execute(_INSERT_ENTRIES, self.entries)
            debits = [{"p_id": player, "amount": amount} for player, amount in sorted(self.debits.items())]
            conn.execute(_DEBIT, debits)

    def _placed_before(self, bets: Sequence[PlacedBet]) -> list[PlacedBet] | None:
        """The bets as placed before under the same ids (a retry), None if none was; `BetRejected` if an id was used
        for another bet."""
        if self.known.keys().isdisjoint(bet.bet_id for bet in bets):
            return None
        for bet in bets:
            found = self.known.get(bet.bet_id)
            if found is None or (found[0].player_id, found[0].game_id, found[0].bet_type, found[1]) != (
                bet.player_id, bet.game_id, bet.bet_type, bet.stake):  # fmt: skip
                used = bet.bet_id if found is not None else next(b.bet_id for b in bets if b.bet_id in self.known)
                raise BetRejected(bet.bet_type.value, bet.stake, f"bet id {used!r} was used for another bet")
        return [_as_retried(*self.known[bet.bet_id]) for bet in bets]

    def _fit(self, placement: Placement) -> list[PlacedBet]:
        """The bets with the stakes the table accepts, checked against the player's round as the batch sees it
        (`BetRejected` naming the rule otherwise)."""
        bets, limits = placement.bets, placement.limits
        if limits is None and not placement.repeat:
            return list(bets)
        first = bets[0]
        key = (first.player_id, first.game_id)
        # copies: a request refused halfway (a 2 Way's second bet, say) leaves the batch's view as it was
        staked: dict[BetType, int] = dict(self.staked.get(key, {}))
        count: dict[BetType, int] = dict(self.count.get(key, {}))
        open_bets = sum(count.values())
        if placement.repeat and open_bets:
            reason = (f"repeat is only for before the player's first bet of the round: {first.player_id} has "
                      f"{open_bets} open bet(s) on it")  # fmt: skip
            raise BetRejected("repeat", 0, reason)
        if limits is None:
            return list(bets)
        own = self.own.get(first.player_id)
        accepted = []
        for bet in bets:
            bet_type = bet.bet_type
            try:
                taken = limits.take(bet_type, bet.stake, staked.get(bet_type, 0), count.get(bet_type, 0), own,
                                    placement.cap)  # fmt: skip
            except MaximumReached:
                if placement.cap:
                    continue  # a double leaves an area that holds its maximum as it is
                raise
            staked[bet_type] = staked.get(bet_type, 0) + taken.stake
            count[bet_type] = count.get(bet_type, 0) + 1
            same = taken.stake == bet.stake and taken.notice == bet.notice  # most bets: taken as asked
            accepted.append(bet if same else replace(bet, stake=taken.stake, notice=taken.notice))
        if not accepted:
            raise BetRejected("double", 0, f"{MAXIMUM_REACHED}: every area of this player's bets holds its maximum")
        return accepted

    def _check_cover(self, conn: Any, bets: Sequence[PlacedBet], bank: BankAgainst) -> None:
        """The bank's balance covers the worst outcome of every open bet of the round with these (its wallet locked
        at the first look in this transaction)."""
        game_id = bets[0].game_id
        if game_id not in self.banks:
            balance = conn.execute(_BANK_LOCKED, {"player": bank.player_id}).scalar()
            open_stakes: Counter[BetType] = Counter()
            number = 0
            for bet_type, staked, count in conn.execute(_ROUND_STAKES, {"game": game_id}):
                open_stakes[BetType(bet_type)] += int(staked)
                number += int(count)
            self.banks[game_id] = (balance, open_stakes, number)  # as committed before this batch
        balance, committed, number = self.banks[game_id]
        added, added_number = self.round_added.get(game_id, (Counter(), 0))
        stakes = committed + added
        for bet in bets:
            stakes[bet.bet_type] += bet.stake
        needed = bank.cover.exposure(stakes, number + added_number + len(bets))
        if balance is None or balance < needed:
            last = bets[-1]
            raise BankCannotCover(last.bet_type.value, last.stake, balance or 0, needed)


def _as_retried(bet: PlacedBet, asked: int) -> PlacedBet:
    """A bet answered again to a retry, its notice said as a stored bet's is."""
    notice = None if asked == bet.stake else MAXIMUM_REACHED if asked > bet.stake else RAISED
    return replace(bet, notice=notice)


def owners_of(bets: Iterable[PlacedBet]) -> dict[str, str]:
    return {bet.bet_id: bet.player_id for bet in bets}
