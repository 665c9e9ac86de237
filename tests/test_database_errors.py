"""Every store speaks the studio's error family: a database that stops answering raises `DatabaseUnavailable` (a
`StoreError`) with the driver's one-line reason, never SQLAlchemy's own errors, and changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from studio.chat_store import ChatStore
from studio.clock import ManualClock
from studio.database import DatabaseUnavailable
from studio.domain.records import StoreError
from studio.domain.roles import Role
from studio.users import UserError, UserStore
from studio.wallets import WalletStore

CLOCK = ManualClock(datetime(2026, 12, 1, tzinfo=UTC))

CALLS: dict[str, tuple[Callable[[str], Any], Callable[[Any], object]]] = {
    "wallets": (lambda url: WalletStore(url, CLOCK), lambda store: store.deposit("p1", "gs1", 1_000)),
    "users": (lambda url: UserStore(url, CLOCK), lambda store: store.users()),
    "chat": (lambda url: ChatStore(url, CLOCK), lambda store: store.messages("T1")),
}


@pytest.mark.parametrize("kind", sorted(CALLS))
def test_a_damaged_database_raises_the_studios_own_error(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "studio.db"
    make, call = CALLS[kind]
    store = make(f"sqlite:///{path}")
    call(store)  # works while the database is sound
    store.close()
    for leftover in tmp_path.glob("studio.db-*"):  # the WAL and its index
        leftover.unlink()
    path.write_bytes(b"this is not a database" * 400)
    with pytest.raises(DatabaseUnavailable, match=r"the studio database: .*not a database") as raised:
        call(store)
    assert isinstance(raised.value, StoreError)


def test_an_integrity_error_the_store_expects_is_still_its_answer(tmp_path: Path) -> None:
    users = UserStore(f"sqlite:///{tmp_path / 'u.db'}", CLOCK)
    users.add_user("ann", Role.DEALER, "secret")
    with pytest.raises(UserError, match="already exists"):  # a duplicate name is an answer, not an outage
        users.add_user("ann", Role.DEALER, "secret")
