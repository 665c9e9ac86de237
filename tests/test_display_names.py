"""A person's display name: what players are told (the dealer on the feed), set with `studio users`, checked, never
the account name."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from studio.clock import ManualClock
from studio.domain.roles import Role
from studio.settings import sqlite_url
from studio.users import UserError, UserStore
from studio_cli.main import main

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def test_display_names_are_set_listed_and_changed_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    database = str(tmp_path / "users.db")
    monkeypatch.setenv("STUDIO_PASSWORD", "s3cret-passw0rd")
    assert main(["users", "--database", database, "add", "anna7", "--role", "dealer", "--display-name", "Anna"]) == 0
    assert main(["users", "--database", database, "add", "bo", "--role", "dealer"]) == 0
    capsys.readouterr()
    assert main(["users", "--database", database, "list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert any(line.startswith("anna7") and line.endswith("shown as Anna") for line in listed)
    assert any(line.startswith("bo") and "shown as" not in line for line in listed)
    assert main(["users", "--database", database, "display-name", "bo", "Bo  Li"]) == 0
    assert "'Bo Li'" in capsys.readouterr().out
    users = UserStore(sqlite_url(database), ManualClock(T0))
    try:
        assert users.display_name("bo") == "Bo Li" and users.display_name("anna7") == "Anna"
        assert users.display_name("nobody") is None
    finally:
        users.close()


@pytest.mark.parametrize("bad", ["", " \t\n ", "x" * 41, "nul\x00", "bell\x07"])
def test_a_bad_display_name_is_refused_and_changes_nothing(tmp_path: Path, bad: str) -> None:
    users = UserStore(sqlite_url(str(tmp_path / "u.db")), ManualClock(T0))
    try:
        users.add_user("anna7", Role.DEALER, "pw-1234", "Anna")
        with pytest.raises(UserError, match="display name"):
            users.set_display_name("anna7", bad)
        with pytest.raises(UserError, match="display name"):
            users.add_user("bo", Role.DEALER, "pw-1234", bad)
        assert users.display_name("anna7") == "Anna"
        assert [p.name for p in users.users()] == ["anna7"]
        with pytest.raises(UserError, match="no account"):
            users.set_display_name("nobody", "Nobody")
    finally:
        users.close()
