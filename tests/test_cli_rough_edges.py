"""The command line's rough edges (issue 15, point 6): no terminal for a password is one line, not a traceback; a port
out of range is refused; --database is accepted after the action too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from studio_cli.main import main


def studio(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "studio_cli.main", *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, env=env, timeout=60, check=False)  # fmt: skip


def test_adding_a_person_with_no_terminal_says_what_to_do_in_one_line(tmp_path: Path) -> None:
    database = str(tmp_path / "s.db")
    answer = studio("users", "add", "ann", "--role", "dealer", "--database", database, env={"PATH": "/usr/bin"})
    assert answer.returncode == 1 and answer.stdout == ""
    assert answer.stderr.strip() == (
        "studio: error: no terminal to ask the password of ann on: set STUDIO_PASSWORD; nothing was created"
    )
    listed = studio("users", "list", "--database", database)
    assert "ann" not in listed.stdout


@pytest.mark.parametrize("port", ["99999", "0", "-1", "http"])
@pytest.mark.parametrize("command", [["run"], ["feed", "--database", "x.db", "--redis", "redis://h"]])
def test_a_port_out_of_range_is_refused(command: list[str], port: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as refused:
        main([*command, "--port", port])
    assert refused.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.endswith(f"a port is a whole number from 1 to 65535, not {port if port != 'http' else repr(port)}")


def test_database_is_accepted_before_or_after_the_action(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STUDIO_PASSWORD", "pw-1234567890")
    before, after = str(tmp_path / "before.db"), str(tmp_path / "after.db")
    assert main(["users", "--database", before, "add", "ann", "--role", "dealer"]) == 0
    assert main(["users", "add", "bob", "--role", "pit_boss", "--database", after]) == 0
    assert main(["users", "add-key", "operator-1", "--database", after]) == 0
    capsys.readouterr()
    assert main(["users", "list", "--database", after]) == 0
    listed = capsys.readouterr().out
    assert "bob" in listed and "operator-1" in listed and "ann" not in listed
    assert main(["users", "--database", before, "list"]) == 0
    assert "ann" in capsys.readouterr().out
