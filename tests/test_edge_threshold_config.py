"""`[table] edge_alert_threshold`: the players' edge (percent of the stake) beyond which the live shoe figures alert."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from studio.domain.errors import ConfigError
from studio.settings import load_table_config


def threshold_of(tmp_path: Path, value: str) -> Fraction:
    table = tmp_path / "t.toml"
    table.write_text(f'[table]\nid = "T1"\nedge_alert_threshold = {value}\n')
    return load_table_config(table).edge_alert_threshold


def test_the_default_alerts_as_soon_as_a_bet_favours_the_players() -> None:
    assert load_table_config().edge_alert_threshold == 0


READ = [('"0.5"', Fraction(1, 2)), ("-1", Fraction(-1)), ("0.25", Fraction(1, 4)), ('" 2 "', Fraction(2)),
        ('"-100"', Fraction(-100)), ('"0.000001"', Fraction(1, 10**6))]  # fmt: skip


@pytest.mark.parametrize(("value", "expected"), READ)
def test_a_threshold_is_read_exactly(tmp_path: Path, value: str, expected: Fraction) -> None:
    assert threshold_of(tmp_path, value) == expected


@pytest.mark.parametrize(
    "value", ['"half"', "true", '"nan"', '"inf"', "101", '"-100.5"', '"1e-999999999"', "[1]", '""']
)
def test_anything_else_is_refused_in_one_line(tmp_path: Path, value: str) -> None:
    with pytest.raises(
        ConfigError, match=r"table.edge_alert_threshold: expected a percentage from -100 to 100"
    ) as error:
        threshold_of(tmp_path, value)
    assert "\n" not in str(error.value)
