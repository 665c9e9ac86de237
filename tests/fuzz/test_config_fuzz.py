"""Fuzzing the configuration parsers: table files, pay tables, limits, the procedure, card-source options, amounts.

Whatever a file holds (any bytes, malformed TOML, or valid TOML with wrong types, missing keys, huge numbers, NaN,
unicode), loading it either gives a configuration that keeps the rules' invariants or raises `ConfigError` with one
line naming the file (and the key) at fault. Never another exception, never a hang.
"""

from __future__ import annotations

import math
import tomllib
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given
from hypothesis import strategies as st

from drivers.registry import DRIVERS, create_source
from studio.clock import SystemClock
from studio.domain.errors import ConfigError
from studio.domain.limits import TableLimits, limits_from_mapping
from studio.domain.money import to_minor
from studio.domain.paytable import BetType, PayTable, pay_table_from_mapping
from studio.domain.procedure_config import ProcedureConfig
from studio.settings import (
    MAX_DECKS,
    MAX_SECONDS,
    TABLE_ID,
    TableConfig,
    config_dir,
    load_pay_table,
    load_table_config,
    procedure_from_mapping,
)
from studio.sources import SourceUnavailable
from tests.fuzz.support import fuzz, keys, mutated, toml_document, toml_values

CONFIG = config_dir()
DEFAULT_TABLE = tomllib.loads((CONFIG / "tables" / "default.toml").read_text(encoding="utf-8"))
TWO_SOURCES = tomllib.loads((CONFIG / "tables" / "example-shoe-and-camera.toml").read_text(encoding="utf-8"))
STANDARD = tomllib.loads((CONFIG / "paytables" / "standard.toml").read_text(encoding="utf-8"))
# Every key a table file knows, so that mutations reach all of them.
FULL_TABLE = DEFAULT_TABLE | TWO_SOURCES | {"table": DEFAULT_TABLE["table"] | TWO_SOURCES["table"]}
SOURCE_OPTIONS: dict[str, dict[str, Any]] = {
    "smart_shoe": {"url": "loop://", "baudrate": 115200, "heartbeat_seconds": 1.0},
    "line_scanner": {"url": "/dev/ttyUSB1", "baudrate": 9600},
    "camera": {
        "url": 0,
        "stable_frames": 3,
        "min_confidence": 0.9,
        "read_timeout": 5.0,
        "reread_every": 25,
        "templates": "t.npz",
        "evidence_dir": "artifacts",
        "zones": [{"name": "player", "box": [0, 0, 640, 720]}],
    },
    "memory": {"failing_opens": 1},
}
# One file, rewritten by every example: `tmp_path` may be shared by them.
WITH_FILES = fuzz(300, suppress_health_check=[HealthCheck.function_scoped_fixture])


def one_line_naming(error: ConfigError, *paths: Path) -> None:
    """The message is one line, and starts with the file at fault if one of `paths` is given."""
    message = str(error)
    assert message and "\n" not in message and "\r" not in message, message
    if paths:
        assert message.startswith(tuple(str(path) for path in paths)), message


def check_pay_table(table: PayTable) -> None:
    assert set(table.terms) == set(BetType)
    for terms in table.terms.values():
        for name in ("pays", "commission", "one_hand", "both_hands", "natural_win"):
            ratio = getattr(terms, name, Fraction(0))
            assert isinstance(ratio, Fraction) and ratio >= 0
        assert getattr(terms, "commission", Fraction(0)) <= 1


def check_limits(limits: TableLimits) -> None:
    for limit in limits.bets.values():
        assert type(limit.minimum) is int and type(limit.maximum) is int and 0 < limit.minimum <= limit.maximum
        assert limit.max_payout is None or (type(limit.max_payout) is int and limit.max_payout >= 0)
    assert 0 <= limits.minor_digits <= 4


def check_procedure(procedure: ProcedureConfig) -> None:
    assert 1 <= procedure.decks <= MAX_DECKS and procedure.betting_seconds <= MAX_SECONDS
    assert procedure.burn_after_shuffle + 4 <= procedure.shoe_size - procedure.cut_card_from_back
    assert procedure.warning_seconds <= procedure.betting_seconds
    for name in ("burn_after_error", "burn_after_dealer_change"):
        assert 0 <= getattr(procedure, name) <= procedure.shoe_size


def check_table(table: TableConfig) -> None:
    assert TABLE_ID.fullmatch(table.table_id)
    check_pay_table(table.pay_table)
    check_limits(table.limits)
    check_procedure(table.procedure)
    assert 0 < table.reconcile_window <= MAX_SECONDS
    assert len(table.sources) <= 2 and len({spec.source_id for spec in table.sources}) == len(table.sources)


# ---------------------------------------------------------------------------------------------------------------------
# Whole files


@WITH_FILES
@given(mutated(FULL_TABLE))
@example({"limits": 5}).via("a [limits] that is not a table")
@example({"procedure": {"decks": 10**9}}).via("a shoe too large to build")
@example({"procedure": {"betting_seconds": 10**20, "warning_seconds": 1}}).via("a timer past the calendar")
@example({"table": {"pay_table": "a\x00b"}}).via("a NUL byte in a file name")
@example({"table": {"pay_table": "x" * 5000}}).via("a file name too long for the system")
@example({"table": {"id": "../../etc"}}).via("a table id that is a path")
@example({"reconcile": {"window_seconds": math.nan}}).via("a NaN window")
@example({"limits": {"tie": {"min": "1e999999999", "max": "2e999999999"}}}).via("an amount beyond the decimal range")
def test_any_table_file_loads_or_names_its_problem(tmp_path: Path, document: dict[str, Any]) -> None:
    path = tmp_path / "t9.toml"
    path.write_text(toml_document(document), encoding="utf-8")
    try:
        table = load_table_config(path, base=CONFIG)
    except ConfigError as error:
        one_line_naming(error, path, CONFIG / "paytables")  # the table file, or the pay table it names
    else:
        check_table(table)


HOSTILE_FILES = [b"a = " + b"[" * 5000, b"[table]\nid = " + b"9" * 5000, b"\xff\xfe[table]", b"x = {" * 3000]


@WITH_FILES
@given(st.binary(max_size=300) | st.text(max_size=300).map(str.encode) | st.sampled_from(HOSTILE_FILES))
def test_any_bytes_as_a_table_file_load_or_name_their_problem(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "t9.toml"
    path.write_bytes(data)
    try:
        check_table(load_table_config(path, base=CONFIG))
    except ConfigError as error:
        one_line_naming(error, path, CONFIG / "paytables")


@WITH_FILES
@given(mutated(STANDARD))
@example({"bets": {"tie": {"pays": "1e99999999"}}}).via("a ratio whose exact value would take gigabytes")
@example({"bets": {"player_bonus": {"margins": {"9" * 5000: "1"}}}}).via("a margin of 5000 digits")
def test_any_pay_table_file_loads_or_names_its_problem(tmp_path: Path, document: dict[str, Any]) -> None:
    path = tmp_path / "custom.toml"
    path.write_text(toml_document(document), encoding="utf-8")
    try:
        table = load_pay_table(path)
    except ConfigError as error:
        one_line_naming(error, path)
    else:
        check_pay_table(table)


# ---------------------------------------------------------------------------------------------------------------------
# The parsers behind them, given any value where a table of settings goes


@fuzz(400)
@given(st.dictionaries(keys, toml_values, max_size=4) | toml_values)
def test_any_pay_table_mapping(data: Any) -> None:
    try:
        check_pay_table(pay_table_from_mapping(data, "fuzz"))
    except ConfigError as error:
        one_line_naming(error)


limit_sections = st.dictionaries(st.sampled_from(["min", "max", "max_payout"]) | keys, toml_values, max_size=4)
limits_tables = st.dictionaries(st.sampled_from([b.value for b in BetType]) | keys, limit_sections | toml_values)


@fuzz(400)
@given(limits_tables | toml_values, st.integers(0, 4))
@example({"tie": {"min": "1000000000000000000000000000.001", "max": "1e30"}}, 2).via("a fraction lost to rounding")
def test_any_limits_mapping(data: Any, digits: int) -> None:
    try:
        check_limits(limits_from_mapping(data, "USD", digits, "reject"))
    except ConfigError as error:
        one_line_naming(error)


procedure_tables = st.dictionaries(
    st.sampled_from(list(ProcedureConfig.__dataclass_fields__)) | keys, toml_values | st.integers(-5, 600), max_size=6
)


@fuzz(400)
@given(procedure_tables | toml_values)
def test_any_procedure_mapping(data: Any) -> None:
    try:
        check_procedure(procedure_from_mapping(data))
    except ConfigError as error:
        one_line_naming(error)


@fuzz(400)
@given(st.sampled_from(sorted(DRIVERS)).flatmap(lambda name: st.tuples(st.just(name), mutated(SOURCE_OPTIONS[name]))))
@example(("smart_shoe", {"url": "loop://", "heartbeat_seconds": math.nan})).via("a NaN heartbeat")
@example(("smart_shoe", {"url": "loop://", "heartbeat_seconds": math.inf})).via("an endless heartbeat")
@example(("memory", {"failing_opens": [1]})).via("a count that is a list")
@example(("memory", {"failing_opens": math.inf})).via("an infinite count")
@example(("camera", {"url": 0, "zones": [{"name": "p", "box": [True, 0, 5, 5]}]})).via("a box of booleans")
def test_any_source_options(driver_and_options: tuple[str, dict[str, Any]]) -> None:
    driver, options = driver_and_options
    try:
        source = create_source("fuzz", driver, options, SystemClock())
    except ConfigError as error:
        one_line_naming(error)
    except SourceUnavailable:
        pytest.fail("every driver of the registry is installed here")
    else:
        assert source.source_id == "fuzz"
        heartbeat = getattr(source, "heartbeat_seconds", 1.0)
        assert math.isfinite(heartbeat) and heartbeat > 0


amounts = st.from_regex(r"\A-?[0-9]{0,30}(\.[0-9]{0,30})?(e-?[0-9]{1,10})?\Z") | st.decimals(allow_nan=True).map(str)


@fuzz(500)
@given(amounts | toml_values, st.integers(0, 4))
@example("1e999999999", 2).via("an exponent beyond the decimal context")
@example("1e-999999999", 2).via("an exponent below it")
@example("1000000000000000000000000000.001", 2).via("more digits than the decimal context keeps")
@example("1.00000000000000000000000000001", 2).via("a fraction of a cent past the context's precision")
def test_any_amount_is_exact_minor_units_or_a_config_error(value: Any, digits: int) -> None:
    try:
        minor = to_minor(value, digits, "limits.tie.min")
    except ConfigError as error:
        one_line_naming(error)
        assert str(error).startswith("limits.tie.min: ")
    else:
        assert type(minor) is int and minor >= 0
        assert Decimal(minor).scaleb(-digits) == Decimal(str(value).strip())  # exact, whatever the exponent


def test_a_valid_document_survives_its_toml_writing() -> None:
    """The fuzzers' TOML writer is faithful: the shipped files, written back, load to the same values."""
    for document in (FULL_TABLE, STANDARD, {"k": [1.5, -0.0, "é\x00\U0001f0a1", {"": True}], "n": 2**70}):
        assert tomllib.loads(toml_document(document)) == document


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"limits": 5}, "[limits] must be a table"),
        ({"limits": {"tie": {"min": "1e999999999", "max": "1"}}}, "limits.tie.min: '1e999999999' is over the largest"),
        ({"limits": {"tie": {"min": "1e-999999999", "max": "1"}}}, "limits.tie.min: '1e-999999999' has more than 2"),
        ({"procedure": {"decks": 10**9}}, "procedure.decks: a shoe holds 1 to 16 decks"),
        ({"procedure": {"betting_seconds": 10**20}}, "procedure.betting_seconds: at most 86400 seconds"),
        ({"procedure": {"burn_after_error": 10**6}}, "procedure.burn_after_error: cannot burn more than the 416"),
        ({"reconcile": {"window_seconds": math.nan}}, "reconcile.window_seconds: expected a positive number"),
        ({"reconcile": 5}, "[reconcile] must be a table"),
        ({"table": {"id": "../../etc"}}, "table.id: '../../etc' is not a table id"),
        ({"table": {"currency": ["USD"]}}, "table.currency: expected a non-empty string, got ['USD']"),
        ({"table": {"pay_table": "a\x00b"}}, "cannot be read: embedded null byte"),
        ({"procedure": {"shuffle\ntwice": True}}, "procedure: unknown setting shuffle\\ntwice"),
    ],
)
def test_hostile_values_are_refused_with_the_key_they_sit_under(
    tmp_path: Path, document: dict[str, Any], message: str
) -> None:
    path = tmp_path / "t9.toml"
    path.write_text(toml_document(document), encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_table_config(path, base=CONFIG)
    one_line_naming(raised.value, path, CONFIG / "paytables")
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("pays", "message"),
    [("1e99999999", "is out of range"), ("2000000", "is over the largest payout"), ("nan", "is not a number")],
)
def test_hostile_payouts_are_refused_by_name(tmp_path: Path, pays: str, message: str) -> None:
    document = STANDARD | {"bets": STANDARD["bets"] | {"tie": {"pays": pays}}}
    path = tmp_path / "custom.toml"
    path.write_text(toml_document(document), encoding="utf-8")
    with pytest.raises(ConfigError, match=f"bets.tie.pays: '{pays}' {message}"):
        load_pay_table(path)


def test_a_source_option_out_of_range_names_the_source_and_key() -> None:
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("smart_shoe", {"url": "loop://", "heartbeat_seconds": math.inf}, "heartbeat_seconds"),
        ("memory", {"failing_opens": [1]}, "failing_opens"),
        ("camera", {"url": 0, "zones": [{"name": "p", "box": [True, 0, 5, 5]}]}, r"zones\[0\]"),
    ]
    for driver, options, key in cases:
        with pytest.raises(ConfigError, match=f"source 'shoe-7': .*{key}"):
            create_source("shoe-7", driver, options, SystemClock())
