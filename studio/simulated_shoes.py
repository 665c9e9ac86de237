"""The simulated shoe's order, kept in the studio's database: after a restart the simulator deals the card the
interrupted shoe would have dealt next, as a physical shoe does (where it is in the shoe is the log's count of the
cards out of it, `TableState.cards_drawn`). One row per table: the shoe's number and its cards in draw order."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, insert, select
from sqlalchemy.engine import make_url
from sqlmodel import Field, SQLModel

from studio.database import BIG_INTEGER, WRITE_OPTION, database_errors, open_engine
from studio.domain.cards import Card, parse_cards
from studio.schema import migrate


class SimulatedShoe(SQLModel, table=True):
    __tablename__ = "simulated_shoe"
    table_id: str = Field(primary_key=True)
    shoe: int = Field(sa_type=BIG_INTEGER)  # the table's shoe number (`ShuffleConfirmed.shoe`)
    cards: str  # card codes in draw order, separated by spaces


_S = SimulatedShoe.__table__  # type: ignore[attr-defined]


@database_errors
class SimulatedShoeStore:
    def __init__(self, url: str) -> None:
        self._engine = open_engine(make_url(url))
        self._writer = self._engine.execution_options(**{WRITE_OPTION: True})
        migrate(self._engine)

    def close(self) -> None:
        self._engine.dispose()

    def save(self, table_id: str, shoe: int, cards: Sequence[Card]) -> None:
        """Keep this table's shoe (replacing the one before), durably, before its first card can be dealt."""
        with self._writer.begin() as conn:
            conn.execute(delete(_S).where(_S.c.table_id == table_id))
            conn.execute(insert(_S).values(table_id=table_id, shoe=shoe, cards=" ".join(c.code for c in cards)))

    def load(self, table_id: str) -> tuple[int, list[Card]] | None:
        """The table's last shoe (its number and cards), if one was kept."""
        with self._engine.connect() as conn:
            row = conn.execute(select(_S.c.shoe, _S.c.cards).where(_S.c.table_id == table_id)).first()
        return None if row is None else (int(row.shoe), parse_cards(row.cards))
