"""Table chat kept in the studio database: every message as received and as shown, and who is muted by whom; and the
studio's own notices (the table suspended, resumed, a new shoe...), posted as system messages."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.engine import make_url
from sqlmodel import Field, SQLModel

from studio.database import BIG_INTEGER, WRITE_OPTION, database_errors, open_engine
from studio.domain.chat import ChatFilter, ChatRejected
from studio.ports import Clock
from studio.schema import migrate


class ChatRow(SQLModel, table=True):
    __tablename__ = "chat_message"
    id: int | None = Field(default=None, primary_key=True, sa_type=BIG_INTEGER)
    table_id: str = Field(index=True)
    player_id: str
    nickname: str
    game_server: str
    received: str  # what the player typed, kept for moderators
    shown: str  # what the table sees
    at: str


class MuteRow(SQLModel, table=True):
    __tablename__ = "chat_mute"
    player_id: str = Field(primary_key=True)
    muted_by: str
    reason: str
    at: str


SYSTEM_PLAYER = ""  # the player id of the studio's notices: no player has an empty id
SYSTEM_NICKNAME = "Studio"
_C, _M = ChatRow.__table__, MuteRow.__table__  # type: ignore[attr-defined]


@database_errors
class ChatStore:
    def __init__(self, url: str, clock: Clock, chat_filter: ChatFilter | None = None) -> None:
        self._engine = open_engine(make_url(url))
        self._writer = self._engine.execution_options(**{WRITE_OPTION: True})
        self._clock = clock
        self.filter = chat_filter or ChatFilter()
        migrate(self._engine)

    def close(self) -> None:
        self._engine.dispose()

    def say(self, table_id: str, game_server: str, player_id: str, nickname: str, text: str) -> dict[str, Any]:
        if self.is_muted(player_id):
            raise ChatRejected(f"player {player_id!r} is muted at this studio")
        moderated = self.filter.moderate(text)
        row = {"table_id": table_id, "player_id": player_id, "nickname": nickname[:32], "game_server": game_server,
               "received": text[:2000], "shown": moderated.text, "at": self._clock.now().isoformat()}  # fmt: skip
        with self._writer.begin() as conn:
            row["id"] = conn.execute(insert(_C).values(**row)).inserted_primary_key[0]  # type: ignore[index]
        return row

    def notice(self, table_id: str, text: str) -> dict[str, Any]:
        """Post the studio's own notice to a table's chat: shown as it is, never moderated or muted."""
        row = {"table_id": table_id, "player_id": SYSTEM_PLAYER, "nickname": SYSTEM_NICKNAME, "game_server": "",
               "received": text, "shown": text, "at": self._clock.now().isoformat()}  # fmt: skip
        with self._writer.begin() as conn:
            row["id"] = conn.execute(insert(_C).values(**row)).inserted_primary_key[0]  # type: ignore[index]
        return row

    def messages(self, table_id: str, after: int = 0, limit: int = 50, moderator: bool = False) -> list[dict[str, Any]]:
        query = select(_C).where(_C.c.table_id == table_id, _C.c.id > after).order_by(_C.c.id.desc()).limit(limit)
        with self._engine.connect() as conn:
            rows = [dict(row._mapping) for row in conn.execute(query)]
        fields = ("id", "player_id", "nickname", "shown", "at") + (("received", "game_server") if moderator else ())
        system = SYSTEM_PLAYER
        return [{**{key: row[key] for key in fields}, "system": row["player_id"] == system} for row in reversed(rows)]

    def mute(self, player_id: str, by: str, reason: str) -> None:
        with self._writer.begin() as conn:
            if conn.execute(select(_M.c.player_id).where(_M.c.player_id == player_id)).first() is None:
                conn.execute(insert(_M).values(player_id=player_id, muted_by=by, reason=reason,
                                               at=self._clock.now().isoformat()))  # fmt: skip

    def unmute(self, player_id: str) -> None:
        with self._writer.begin() as conn:
            conn.execute(_M.delete().where(_M.c.player_id == player_id))

    def is_muted(self, player_id: str) -> bool:
        with self._engine.connect() as conn:
            return conn.execute(select(_M.c.player_id).where(_M.c.player_id == player_id)).first() is not None
