"""A table's seats in its file (`[table] seats`, seed 004): 0 (no seats) by default, a whole number up to 12."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.domain.errors import ConfigError
from studio.settings import MAX_SEATS, load_table_config

CONFIG = Path(__file__).resolve().parent.parent / "config"


def test_a_table_has_no_seats_unless_its_file_says_so(tmp_path: Path) -> None:
    assert load_table_config(base=CONFIG).procedure.seats == 0
    path = tmp_path / "t.toml"
    path.write_text('[table]\nid = "T5"\nseats = 5\n')
    assert load_table_config(path, base=CONFIG).procedure.seats == 5


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[table]\nseats = 13", f"table.seats: expected a whole number from 0 (no seats) to {MAX_SEATS}, got 13"),
        ("[table]\nseats = -1", "table.seats: expected a whole number from 0 (no seats) to 12, got -1"),
        ('[table]\nseats = "5"', "table.seats: expected a whole number from 0 (no seats) to 12, got '5'"),
        ("[table]\nseats = true", "table.seats: expected a whole number from 0 (no seats) to 12, got True"),
        ("[procedure]\nseats = 5", "procedure: unknown setting seats"),  # a table's layout, under [table]
    ],
)
def test_bad_seats_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "t.toml"
    path.write_text(text + "\n")
    with pytest.raises(ConfigError) as info:
        load_table_config(path, base=CONFIG)
    assert message in str(info.value) and str(path) in str(info.value)
