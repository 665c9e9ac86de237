"""Table limits read from config/tables/default.toml (seeds: Player/Banker 10-400, Tie 5-50, payout caps)."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.domain.errors import BetRejected, ConfigError
from studio.domain.limits import BetLimit, TableLimits, UnderMinimum, limits_from_mapping
from studio.domain.paytable import BetType
from studio.settings import TableConfig, load_table_config

CONFIG = Path(__file__).resolve().parent.parent / "config"


@pytest.fixture(scope="module")
def table() -> TableConfig:
    return load_table_config(base=CONFIG)


@pytest.fixture(scope="module")
def limits(table: TableConfig) -> TableLimits:
    return table.limits


def _table_file(tmp_path: Path, text: str, name: str = "t7.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _config_error(tmp_path: Path, text: str) -> str:
    path = _table_file(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_table_config(path, base=CONFIG)
    message = str(info.value)
    assert str(path) in message
    assert "\n" not in message
    return message


# ---------------------------------------------------------------------------------------------------------------------
# The seeds' limits


def test_default_table(table: TableConfig) -> None:
    assert table.table_id == "T1"
    assert table.pay_table.name == "standard"
    assert table.limits.currency == "USD"
    assert table.limits.minor_digits == 2
    assert table.limits.under_minimum is UnderMinimum.REJECT


def test_seed_limits_in_minor_units(limits: TableLimits) -> None:
    assert limits.bets[BetType.PLAYER] == BetLimit(1000, 40000, 40000)
    assert limits.bets[BetType.BANKER] == BetLimit(1000, 40000, 38000)
    assert limits.bets[BetType.TIE] == BetLimit(500, 5000, 40000)


def test_side_bet_limits_have_no_payout_cap(limits: TableLimits) -> None:
    assert limits.bets[BetType.PLAYER_PAIR] == BetLimit(500, 5000, None)
    assert limits.bets[BetType.PERFECT_PAIR] == BetLimit(500, 2500, None)
    assert set(limits.bets) == set(BetType)


@pytest.mark.parametrize(
    ("bet_type", "stake"),
    [
        (BetType.PLAYER, 1000),
        (BetType.PLAYER, 40000),
        (BetType.BANKER, 12345),
        (BetType.TIE, 500),
        (BetType.TIE, 5000),
        (BetType.PERFECT_PAIR, 2500),
    ],
)
def test_stakes_within_limits_are_accepted(limits: TableLimits, bet_type: BetType, stake: int) -> None:
    assert limits.accept(bet_type, stake) == stake


@pytest.mark.parametrize(
    ("bet_type", "stake", "limit"),
    [
        (BetType.PLAYER, 40001, "400.00 USD"),
        (BetType.BANKER, 100000, "400.00 USD"),
        (BetType.TIE, 5001, "50.00 USD"),
        (BetType.PERFECT_PAIR, 2501, "25.00 USD"),
    ],
)
def test_over_maximum_is_rejected(limits: TableLimits, bet_type: BetType, stake: int, limit: str) -> None:
    with pytest.raises(BetRejected) as info:
        limits.accept(bet_type, stake)
    assert f"maximum of {limit}" in str(info.value)
    assert info.value.bet_type == bet_type.value
    assert info.value.stake == stake


@pytest.mark.parametrize(
    ("bet_type", "stake", "limit"),
    [(BetType.PLAYER, 999, "10.00 USD"), (BetType.BANKER, 1, "10.00 USD"), (BetType.TIE, 499, "5.00 USD")],
)
def test_under_minimum_is_rejected_by_default(limits: TableLimits, bet_type: BetType, stake: int, limit: str) -> None:
    with pytest.raises(BetRejected, match=f"minimum of {limit}"):
        limits.accept(bet_type, stake)


@pytest.mark.parametrize("stake", [0, -1000, True, 10.0, "1000"])
def test_non_positive_or_non_integer_stakes_are_rejected(limits: TableLimits, stake: object) -> None:
    with pytest.raises(BetRejected, match="positive whole number"):
        limits.accept(BetType.PLAYER, stake)  # type: ignore[arg-type]


def test_raise_policy_lifts_stakes_to_the_minimum(tmp_path: Path) -> None:
    path = _table_file(tmp_path, '[table]\nunder_minimum = "raise"\n')
    config = load_table_config(path, base=CONFIG)
    assert config.table_id == "t7"
    limits = config.limits
    assert limits.under_minimum is UnderMinimum.RAISE
    assert limits.accept(BetType.PLAYER, 1) == 1000
    assert limits.accept(BetType.BANKER, 999) == 1000
    assert limits.accept(BetType.TIE, 100) == 500
    assert limits.accept(BetType.PLAYER, 2000) == 2000
    with pytest.raises(BetRejected, match="maximum"):
        limits.accept(BetType.PLAYER, 40001)
    with pytest.raises(BetRejected, match="positive"):
        limits.accept(BetType.PLAYER, 0)


def test_table_file_overrides_one_limit_and_keeps_the_rest(tmp_path: Path) -> None:
    text = '[table]\nid = "VIP-1"\ncurrency = "EUR"\n\n[limits.player]\nmax = "1000"\n'
    config = load_table_config(_table_file(tmp_path, text), base=CONFIG)
    assert config.table_id == "VIP-1"
    assert config.limits.bets[BetType.PLAYER] == BetLimit(1000, 100000, 40000)
    assert config.limits.bets[BetType.BANKER] == BetLimit(1000, 40000, 38000)
    with pytest.raises(BetRejected, match=r"1000\.00 EUR"):
        config.limits.accept(BetType.PLAYER, 100001)


def test_zero_minor_digits(tmp_path: Path) -> None:
    config = load_table_config(_table_file(tmp_path, "[table]\nminor_unit_digits = 0\n"), base=CONFIG)
    assert config.limits.bets[BetType.PLAYER] == BetLimit(10, 400, 400)
    with pytest.raises(BetRejected, match="maximum of 400 USD"):
        config.limits.accept(BetType.PLAYER, 401)


def test_bet_type_without_limits_is_not_offered(tmp_path: Path) -> None:
    # A configuration folder whose defaults list only Player and Banker.
    (tmp_path / "tables").mkdir()
    standard = CONFIG / "paytables" / "standard.toml"
    (tmp_path / "tables" / "default.toml").write_text(
        f'[table]\npay_table = "{standard.as_posix()}"\n\n'
        '[limits.player]\nmin = "10"\nmax = "400"\n\n[limits.banker]\nmin = "10"\nmax = "400"\n',
        encoding="utf-8",
    )
    limits = load_table_config(base=tmp_path).limits
    assert set(limits.bets) == {BetType.PLAYER, BetType.BANKER}
    assert limits.accept(BetType.BANKER, 1000) == 1000
    with pytest.raises(BetRejected, match="not offered") as info:
        limits.accept(BetType.TIE, 1000)
    assert info.value.bet_type == "tie"


def test_limits_from_mapping_direct() -> None:
    limits = limits_from_mapping({"Player Pair": {"min": 5, "max": "7.5"}}, "GBP", 2, "reject")
    assert limits.bets == {BetType.PLAYER_PAIR: BetLimit(500, 750, None)}
    assert limits.money(750) == "7.50 GBP"
    with pytest.raises(BetRejected, match="not offered"):
        limits.accept(BetType.PLAYER, 500)


# ---------------------------------------------------------------------------------------------------------------------
# Malformed limits


def test_min_above_max(tmp_path: Path) -> None:
    message = _config_error(tmp_path, '[limits.tie]\nmin = "60"\nmax = "50"\n')
    assert "limits.tie" in message
    assert "min <= max" in message


def test_zero_minimum(tmp_path: Path) -> None:
    message = _config_error(tmp_path, '[limits.tie]\nmin = "0"\n')
    assert "limits.tie" in message


def test_three_decimals(tmp_path: Path) -> None:
    message = _config_error(tmp_path, '[limits.player]\nmin = "10.005"\n')
    assert "limits.player.min" in message
    assert "10.005" in message
    assert "decimal places" in message


@pytest.mark.parametrize("value", ['"ten"', '"-10"', "10.5", "true", '"NaN"'])
def test_bad_amounts(tmp_path: Path, value: str) -> None:
    message = _config_error(tmp_path, f"[limits.banker]\nmax = {value}\n")
    assert "limits.banker.max" in message


def test_unknown_key(tmp_path: Path) -> None:
    message = _config_error(tmp_path, '[limits.player]\nmaximum = "500"\n')
    assert "limits.player" in message
    assert "unknown setting maximum" in message


def test_unknown_bet_type(tmp_path: Path) -> None:
    message = _config_error(tmp_path, '[limits.dragon]\nmin = "5"\nmax = "50"\n')
    assert "dragon" in message


def test_bad_policy(tmp_path: Path) -> None:
    message = _config_error(tmp_path, '[table]\nunder_minimum = "ignore"\n')
    assert "under_minimum" in message
    assert "ignore" in message


def test_bad_minor_digits(tmp_path: Path) -> None:
    message = _config_error(tmp_path, "[table]\nminor_unit_digits = 7\n")
    assert "minor_unit_digits" in message


def test_limit_not_a_table(tmp_path: Path) -> None:
    message = _config_error(tmp_path, '[limits]\nplayer = "10-400"\n')
    assert "limits.player" in message


def test_missing_max_directly() -> None:
    with pytest.raises(ConfigError, match=r"limits\.tie: needs both min and max"):
        limits_from_mapping({"tie": {"min": "5"}}, "USD", 2, "reject")


def test_malformed_table_toml(tmp_path: Path) -> None:
    message = _config_error(tmp_path, "[table\n")
    assert "malformed TOML" in message


def test_missing_table_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.toml"
    with pytest.raises(ConfigError, match="no such file") as info:
        load_table_config(path, base=CONFIG)
    assert str(path) in str(info.value)


def test_missing_pay_table_names_its_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_table_config(_table_file(tmp_path, '[table]\npay_table = "nonexistent"\n'), base=CONFIG)
    assert str(CONFIG / "paytables" / "nonexistent.toml") in str(info.value)
    assert "no such file" in str(info.value)
