"""Reading the studio's configuration: TOML files under `config/` (or the folder named by STUDIO_CONFIG_DIR).

`config/tables/default.toml` holds the defaults of every table; a table's own file overrides any key of it.
`config/paytables/NAME.toml` holds a pay table. Every problem is a `ConfigError` whose message names the file.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from pathlib import Path
from typing import Any

from studio.domain.errors import ConfigError
from studio.domain.limits import TableLimits, limits_from_mapping
from studio.domain.paytable import PayTable, pay_table_from_mapping
from studio.domain.player_banker import APPROVAL_SECONDS, MIN_BANK_POINTS
from studio.domain.procedure_config import ProcedureConfig

# A table id names the table in game numbers, URLs and file names: it has no room for spaces or path separators.
TABLE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,31}")
MAX_DECKS = 16  # the shoe is built card by card at every shuffle; real shoes hold 6 or 8 decks
MAX_SEATS = 12  # players' seats at one table (seed 004: five); the console shows them all on one line
MAX_SECONDS = 86_400  # the longest timer or window a setting may ask for: one day, well inside what clocks count


def config_dir() -> Path:
    """The configuration folder: $STUDIO_CONFIG_DIR, else the `config/` folder of this checkout."""
    configured = os.environ.get("STUDIO_CONFIG_DIR")
    return Path(configured) if configured else Path(__file__).resolve().parent.parent / "config"


def sqlite_url(path_or_url: str) -> str:
    """A database URL from what a user typed: a URL as it is, a file path as a SQLite URL."""
    return path_or_url if "://" in path_or_url else f"sqlite:///{path_or_url}"


def read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as file:
            return tomllib.load(file)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a folder, not a TOML file") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: malformed TOML: {error}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    except RecursionError:
        raise ConfigError(f"{path}: malformed TOML: arrays or tables nested too deeply") from None
    except ValueError as error:  # tomllib's own int() refuses integers of more than 4300 digits; open() a NUL byte
        raise ConfigError(f"{path}: cannot be read: {error}") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot be read: {error.strerror or error}") from None


def _resolve(name_or_path: str | Path, folder: Path) -> Path:
    path = Path(name_or_path)
    if path.suffix == ".toml" or len(path.parts) > 1:  # a file; a bare name is looked up in the config folder
        return path
    return folder / f"{name_or_path}.toml"


def load_pay_table(name_or_path: str | Path, base: Path | None = None) -> PayTable:
    """A pay table by name (`standard` → config/paytables/standard.toml) or by file path."""
    path = _resolve(name_or_path, (base or config_dir()) / "paytables")
    data = read_toml(path)  # its errors name the file already
    try:
        return pay_table_from_mapping(data, path.stem)
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None


def _merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """One `[[sources]]` entry: a card source by driver name, with the driver's own options (checked by the driver)."""

    source_id: str
    driver: str
    options: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class TableConfig:
    table_id: str
    pay_table: PayTable
    limits: TableLimits
    procedure: ProcedureConfig = field(default_factory=ProcedureConfig)
    sources: tuple[SourceSpec, ...] = ()
    reconcile_window: float = 2.0  # with two sources: how long a card may wait for the other source's read
    player_banker: bool = False  # [table] banker = "player": one player holds the bank (seed 001)
    bank_min_points: int = MIN_BANK_POINTS  # [table] bank_min_points: credit points needed to take the bank
    approval_seconds: int = APPROVAL_SECONDS  # [table] banker_approval_seconds: the banker's time to approve a round
    # [table] edge_alert_threshold: the players' edge on a bet (percent of the stake, exact) beyond which the live shoe
    # figures raise an alert; 0: as soon as a bet favours the players
    edge_alert_threshold: Fraction = Fraction(0)
    path: Path | None = None  # the file the table was read from, for error messages


def sources_from_list(data: Any) -> tuple[SourceSpec, ...]:
    """The `[[sources]]` array: each entry needs an `id` and a `driver`; at most two sources (one truth from two)."""
    if not isinstance(data, list):
        raise ConfigError("sources: expected [[sources]] entries")
    specs = []
    for index, entry in enumerate(data):
        where = f"sources[{index}]"
        if not isinstance(entry, Mapping):
            raise ConfigError(f"{where}: expected a table with id and driver")
        for key in ("id", "driver"):
            if not isinstance(entry.get(key), str) or not entry[key].strip():
                raise ConfigError(f"{where}.{key}: required, a non-empty string")
        options = {key: value for key, value in entry.items() if key not in ("id", "driver")}
        specs.append(SourceSpec(entry["id"], entry["driver"], options))
    ids = [spec.source_id for spec in specs]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"sources: ids must differ, got {', '.join(ids)}")
    if len(specs) > 2:
        raise ConfigError(f"sources: a table takes one or two card sources, not {len(specs)}")
    return tuple(specs)


def procedure_from_mapping(data: Mapping[str, Any]) -> ProcedureConfig:
    """The `[procedure]` table: whole numbers and true/false, each checked against the rules' bounds."""
    if not isinstance(data, Mapping):
        raise ConfigError("[procedure] must be a table of settings")
    known = {f.name: f.type for f in fields(ProcedureConfig) if f.name != "seats"}  # seats: [table] seats
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ConfigError(f"procedure: unknown setting {', '.join(unknown)}")
    for key, value in data.items():
        if known[key] == "bool":
            if not isinstance(value, bool):
                raise ConfigError(f"procedure.{key}: expected true or false, got {value!r}")
        elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"procedure.{key}: expected a whole number of at least 0, got {value!r}")
    config = ProcedureConfig(**data)
    if not 1 <= config.decks <= MAX_DECKS:
        raise ConfigError(f"procedure.decks: a shoe holds 1 to {MAX_DECKS} decks, not {config.decks}")
    if config.burn_after_shuffle + 4 > config.shoe_size - config.cut_card_from_back:
        raise ConfigError("procedure: the cut card leaves no room for the shuffle burn and a round")
    for key in ("burn_after_error", "burn_after_dealer_change"):
        if getattr(config, key) > config.shoe_size:
            raise ConfigError(f"procedure.{key}: cannot burn more than the {config.shoe_size} cards of the shoe")
    for key in ("betting_seconds", "betting_seconds_after_error"):
        if getattr(config, key) > MAX_SECONDS:
            raise ConfigError(f"procedure.{key}: at most {MAX_SECONDS} seconds, not {getattr(config, key)}")
    if config.warning_seconds > config.betting_seconds:
        raise ConfigError("procedure.warning_seconds: cannot exceed betting_seconds")
    return config


def _text(table: Mapping[str, Any], key: str, default: str) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"table.{key}: expected a non-empty string, got {value!r}")
    return value


def _edge_threshold(value: Any) -> Fraction:
    """`[table] edge_alert_threshold`: a percentage of the stake from -100 to 100 with at most 6 decimals, as a string
    ("0.5") or a number."""
    problem = f'table.edge_alert_threshold: expected a percentage from -100 to 100, like "0.5", got {value!r}'
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ConfigError(problem)
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        raise ConfigError(problem) from None
    if not number.is_finite() or not -100 <= number <= 100 or int(number.as_tuple().exponent) < -6:
        raise ConfigError(problem)  # a percentage, not a fraction with a denominator of a billion digits
    return Fraction(number)


def load_table_config(table_file: Path | None = None, base: Path | None = None) -> TableConfig:
    """The defaults in config/tables/default.toml, overridden by `table_file` if given."""
    folder = base or config_dir()
    default_path = folder / "tables" / "default.toml"
    data = read_toml(default_path)
    path = default_path
    if table_file is not None:
        path = table_file
        data = _merge(data, read_toml(table_file))
    try:
        table = data.get("table", {})
        if not isinstance(table, Mapping):
            raise ConfigError("[table] must be a table of settings")
        digits = table.get("minor_unit_digits", 2)
        if isinstance(digits, bool) or not isinstance(digits, int) or not 0 <= digits <= 4:
            raise ConfigError(f"table.minor_unit_digits: expected 0 to 4, got {digits!r}")
        limits = limits_from_mapping(
            data.get("limits", {}), _text(table, "currency", "USD"), digits, _text(table, "under_minimum", "reject"),
            _text(table, "over_maximum", "reject"), table.get("max_bets_per_area", 3),
        )  # fmt: skip
        pay_table = load_pay_table(_text(table, "pay_table", "standard"), folder)
        table_id = _text(table, "id", path.stem if table_file is not None else "T1")
        if not TABLE_ID.fullmatch(table_id):
            raise ConfigError(f"table.id: {table_id!r} is not a table id (letters, digits, '.', '_', '-'; at most 32)")
        procedure = procedure_from_mapping(data.get("procedure", {}))
        seats = table.get("seats", 0)
        if isinstance(seats, bool) or not isinstance(seats, int) or not 0 <= seats <= MAX_SEATS:
            raise ConfigError(f"table.seats: expected a whole number from 0 (no seats) to {MAX_SEATS}, got {seats!r}")
        procedure = replace(procedure, seats=seats)
        banker = table.get("banker", "house")
        if banker not in ("house", "player"):
            raise ConfigError(f'table.banker: expected "house" or "player", got {banker!r}')
        min_points = table.get("bank_min_points", MIN_BANK_POINTS)
        if isinstance(min_points, bool) or not isinstance(min_points, int) or not 0 <= min_points <= 10**12:
            raise ConfigError(f"table.bank_min_points: expected a whole number of at least 0, got {min_points!r}")
        approval = table.get("banker_approval_seconds", APPROVAL_SECONDS)
        if isinstance(approval, bool) or not isinstance(approval, int) or not 1 <= approval <= MAX_SECONDS:
            expected = f"expected a whole number of seconds from 1 to {MAX_SECONDS}"
            raise ConfigError(f"table.banker_approval_seconds: {expected}, got {approval!r}")
        threshold = _edge_threshold(table.get("edge_alert_threshold", "0"))
        sources = sources_from_list(data.get("sources", []))
        reconcile = data.get("reconcile", {})
        if not isinstance(reconcile, Mapping):
            raise ConfigError("[reconcile] must be a table of settings")
        window = reconcile.get("window_seconds", 2.0)
        if isinstance(window, bool) or not isinstance(window, (int, float)) or not 0 < window <= MAX_SECONDS:
            expected = f"expected a positive number of seconds, at most {MAX_SECONDS}"
            raise ConfigError(f"reconcile.window_seconds: {expected}, got {window!r}")
    except ConfigError as error:
        message = str(error)
        raise ConfigError(message if message.startswith(str(folder)) else f"{path}: {message}") from None
    return TableConfig(
        table_id,
        pay_table,
        limits,
        procedure,
        sources,
        float(window),
        player_banker=banker == "player",
        bank_min_points=min_points,
        approval_seconds=approval,
        edge_alert_threshold=threshold,
        path=path,
    )
