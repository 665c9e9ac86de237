"""The seeds' betting rules (issue 14, point 4): at most three bets per area and round, repeat only before the first
bet, the over-maximum policy, and a player's own maximum stake (PIN, once a week, every table)."""

from __future__ import annotations

import sqlite3
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from alembic import command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text
from sqlalchemy.engine import make_url

from studio.betting import BettingService
from studio.clock import ManualClock
from studio.database import open_engine
from studio.domain.errors import BetRejected, ConfigError
from studio.domain.limits import (
    MAXIMUM_REACHED,
    MaximumReached,
    OverMaximum,
    TableLimits,
    Taken,
    UnderMinimum,
    limits_from_mapping,
    next_own_maximum_change,
    own_maximum_week,
)
from studio.domain.paytable import BetType
from studio.pins import BadPin, hash_pin, verify_pin
from studio.schema import alembic_config
from studio.settings import load_table_config
from studio.wallets import OwnMaximumRefused, PlacedBet, WalletError, WalletStore, WrongPin
from tests.test_betting import START, Table

CONFIG = Path(__file__).resolve().parent.parent / "config"
TABLE = load_table_config(base=CONFIG)
CAPPED = replace(TABLE.limits, over_maximum=OverMaximum.CAP)
BANKER = BetType.BANKER


# ---------------------------------------------------------------------------------------------------------------------
# The rules as pure functions (studio/domain/limits.py)


def test_the_default_table_follows_seed_000() -> None:
    assert TABLE.limits.max_bets_per_area == 3
    assert TABLE.limits.over_maximum is OverMaximum.REJECT


def test_a_fourth_bet_on_an_area_is_refused_naming_the_rule() -> None:
    limits = TABLE.limits
    assert limits.take(BANKER, 1_000, staked=3_000, bets=2).stake == 1_000
    with pytest.raises(BetRejected, match="at most 3 bets per betting area and round: this player has 3 on banker"):
        limits.take(BANKER, 1_000, staked=3_000, bets=3)
    assert limits.take(BetType.TIE, 500, staked=0, bets=0).stake == 500  # another area has its own three


def test_over_the_maximum_is_rejected_or_capped_by_the_table_policy() -> None:
    with pytest.raises(BetRejected, match=r"over the table maximum of 400\.00 USD for this bet \(100\.00 USD left\)"):
        TABLE.limits.take(BANKER, 20_000, staked=30_000)
    taken = CAPPED.take(BANKER, 20_000, staked=30_000)
    assert taken.stake == 10_000
    assert taken.notice == "maximum reached: 100.00 USD accepted, up to the table maximum of 400.00 USD for banker"
    with pytest.raises(MaximumReached, match=r"maximum reached: .* nothing more is accepted there"):
        CAPPED.take(BANKER, 1_000, staked=40_000)
    assert CAPPED.take(BANKER, 50_000).stake == 40_000  # a single stake over the maximum too
    assert CAPPED.take(BANKER, 40_000).notice is None  # exactly the maximum is no notice


def test_a_players_own_maximum_lowers_the_table_maximum_and_never_raises_it() -> None:
    with pytest.raises(BetRejected, match=r"over this player's own maximum stake of 50\.00 USD"):
        TABLE.limits.take(BANKER, 6_000, own_maximum=5_000)
    assert TABLE.limits.take(BANKER, 5_000, own_maximum=5_000).stake == 5_000
    assert CAPPED.take(BANKER, 6_000, staked=2_000, own_maximum=5_000).stake == 3_000
    with pytest.raises(BetRejected, match=r"over the table maximum of 400\.00 USD"):
        TABLE.limits.take(BANKER, 40_100, own_maximum=1_000_000)  # an own maximum above the table's changes nothing


def test_a_double_caps_whatever_the_policy() -> None:
    assert TABLE.limits.take(BANKER, 30_000, staked=30_000, bets=1, cap=True).stake == 10_000


def test_the_minimum_policy_still_applies_and_says_so() -> None:
    raising = replace(TABLE.limits, under_minimum=UnderMinimum.RAISE)
    assert raising.take(BANKER, 100) == Taken(1_000, "raised to the table minimum of 10.00 USD")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('over_maximum = "clip"', 'over_maximum: expected "reject" or "cap", got \'clip\''),
        ("max_bets_per_area = 0", "max_bets_per_area: expected a whole number from 1 to 1000, got 0"),
        ('max_bets_per_area = "3"', "max_bets_per_area: expected a whole number from 1 to 1000, got '3'"),
        ("max_bets_per_area = true", "max_bets_per_area: expected a whole number from 1 to 1000, got True"),
    ],
)
def test_bad_settings_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "t.toml"
    path.write_text(f"[table]\n{text}\n")
    with pytest.raises(ConfigError) as info:
        load_table_config(path, base=CONFIG)
    assert message in str(info.value) and str(path) in str(info.value)


def test_a_table_file_sets_the_policies(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('[table]\nover_maximum = "cap"\nmax_bets_per_area = 5\n')
    limits = load_table_config(path, base=CONFIG).limits
    assert (limits.over_maximum, limits.max_bets_per_area) == (OverMaximum.CAP, 5)
    assert limits_from_mapping({}, "USD", 2, "reject").max_bets_per_area == 3


@settings(max_examples=300, deadline=None)
@given(
    stakes=st.lists(st.integers(1, 60_000), max_size=8),
    own=st.none() | st.integers(1, 50_000),
    policy=st.sampled_from(OverMaximum),
    per_area=st.integers(1, 4),
)
def test_an_area_never_holds_more_than_its_maximum_or_its_number_of_bets(
    stakes: list[int], own: int | None, policy: OverMaximum, per_area: int
) -> None:
    limits = replace(TABLE.limits, over_maximum=policy, max_bets_per_area=per_area)
    maximum = min(40_000, own or 40_000)
    staked = bets = 0
    for stake in stakes:
        try:
            taken = limits.take(BANKER, stake, staked, bets, own)
        except BetRejected:
            continue
        assert taken.stake == stake or (policy is OverMaximum.CAP and taken.stake < stake and taken.notice)
        staked, bets = staked + taken.stake, bets + 1
        assert staked <= maximum and bets <= per_area


# The week of the own maximum: Friday 00:00 at GMT-5 is Friday 05:00 UTC (seed 004).


def test_the_week_starts_on_friday_at_five_utc() -> None:
    friday = datetime(2026, 12, 4, 5, tzinfo=UTC)  # 4 December 2026 is a Friday
    assert friday.weekday() == 4
    assert own_maximum_week(friday) == friday
    assert own_maximum_week(friday - timedelta(microseconds=1)) == friday - timedelta(days=7)
    assert own_maximum_week(datetime(2026, 12, 1, 6, tzinfo=UTC)) == datetime(2026, 11, 27, 5, tzinfo=UTC)
    with pytest.raises(ValueError, match="timezone-aware"):
        own_maximum_week(datetime(2026, 12, 1, 6))
    last = datetime(2026, 12, 1, 6, tzinfo=UTC)
    assert next_own_maximum_change(last, last + timedelta(days=2)) == friday
    assert next_own_maximum_change(last, friday) is None
    assert next_own_maximum_change(None, last) is None


@settings(max_examples=500, deadline=None)
@given(now=st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)))
def test_the_week_agrees_with_the_gmt_minus_5_wall_clock(now: datetime) -> None:
    start = own_maximum_week(now)
    assert start <= now < start + timedelta(days=7)
    local = start.astimezone(ZoneInfo("Etc/GMT+5"))  # POSIX signs: Etc/GMT+5 is UTC-5
    assert (local.weekday(), local.hour, local.minute, local.second, local.microsecond) == (4, 0, 0, 0, 0)
    assert own_maximum_week(now.astimezone(ZoneInfo("Asia/Tokyo"))) == start  # any zone names the same instant


# ---------------------------------------------------------------------------------------------------------------------
# PINs: scrypt hashes only


def test_a_pin_is_kept_as_a_salted_scrypt_hash() -> None:
    first, second = hash_pin("482915"), hash_pin("482915")
    assert first.startswith("scrypt$16384$8$1$") and "482915" not in first
    assert first != second  # a salt of its own
    assert verify_pin("482915", first) and verify_pin("482915", second)
    assert not verify_pin("482916", first)
    assert not verify_pin("48291", first) and not verify_pin("482915", "scrypt$broken")
    for bad in ("123", "1234567890123", "12a4", " 1234", "１２３４"):
        with pytest.raises(BadPin, match="a PIN is 4 to 12 digits") as info:
            hash_pin(bad)
        assert bad not in str(info.value)


# ---------------------------------------------------------------------------------------------------------------------
# Through the betting service and the ledger (the checks run in the transaction that places the bets)


@pytest.fixture
def table(tmp_path: Path) -> Table:
    table = Table(tmp_path / "ledger.db")
    table.wallets.deposit("p1", "gs1", 1_000_000)
    return table


def _open_stakes(table: Table, game: str) -> Counter[str]:
    stakes: Counter[str] = Counter()
    for bet in table.wallets.bets(game, "p1", status="open"):
        stakes[bet.bet_type.value] += bet.stake
    return stakes


def test_three_bets_per_area_and_a_refused_fourth_changes_nothing(table: Table) -> None:
    game = table.open()
    for n in range(3):
        table.bet("p1", f"b{n}", "banker", 1_000)
    before = (table.wallets.balance("p1"), table.wallets.entries("p1"))
    with pytest.raises(BetRejected, match="at most 3 bets per betting area and round"):
        table.bet("p1", "b3", "banker", 1_000)
    assert (table.wallets.balance("p1"), table.wallets.entries("p1")) == before
    table.bet("p1", "t1", "tie", 500)  # another area
    table.bet("p1", "b0", "banker", 1_000)  # a retry of a placed bet is still a no-op, not a fourth bet
    table.betting.undo_last(table.service.state, "p1")  # the tie
    table.betting.undo_last(table.service.state, "p1")  # the third banker bet: its place is free again
    table.bet("p1", "b4", "banker", 2_000)
    assert _open_stakes(table, game) == {"banker": 4_000}
    # Another player has three of their own.
    table.wallets.deposit("p2", "gs1", 10_000)
    for n in range(3):
        table.bet("p2", f"q{n}", "banker", 1_000)


def test_a_2_way_chip_is_placed_whole_or_not_at_all(table: Table) -> None:
    game = table.open()
    for n in range(3):
        table.bet("p1", f"pp{n}", "player_pair", 500)
    with pytest.raises(BetRejected, match="at most 3 bets per betting area"):
        table.bet("p1", "w", "2 way", 500)  # its banker pair part would fit, its player pair part does not
    assert _open_stakes(table, game) == {"player_pair": 1_500}
    assert table.wallets.balance("p1") == 1_000_000 - 1_500


def test_a_double_is_one_more_bet_on_each_area_it_doubles(table: Table) -> None:
    game = table.open()
    for n in range(3):
        table.bet("p1", f"b{n}", "banker", 1_000)
    table.bet("p1", "t", "tie", 500)
    with pytest.raises(BetRejected, match="at most 3 bets per betting area"):
        table.betting.double(table.service.state, "gs1", "p1")
    assert _open_stakes(table, game) == {"banker": 3_000, "tie": 500}  # the tie was not doubled either


def test_repeat_only_before_the_first_bet_of_the_round(table: Table) -> None:
    previous = table.open()
    table.bet("p1", "b1", "banker", 1_000)
    table.bet("p1", "t1", "tie", 500)
    table.deal("QH 9D 2C 10S")
    game = table.open()
    table.bet("p1", "x", "player", 1_000)
    before = table.wallets.balance("p1")
    with pytest.raises(BetRejected, match="repeat is only for before the player's first bet of the round: p1 has 1"):
        table.betting.repeat(table.service.state, "gs1", "p1", previous)
    assert table.wallets.balance("p1") == before
    table.betting.undo_last(table.service.state, "p1")  # the felt is clear again
    repeated = table.betting.repeat(table.service.state, "gs1", "p1", previous)
    assert sorted((b.bet_type.value, b.stake) for b in repeated) == [("banker", 1_000), ("tie", 500)]
    again = table.betting.repeat(table.service.state, "gs1", "p1", previous)  # a retry: the same bets, once
    assert again == repeated
    assert _open_stakes(table, game) == {"banker": 1_000, "tie": 500}
    assert table.wallets.balance("p1") == table.wallets.ledger_sum("p1")


def test_the_cap_policy_accepts_up_to_the_maximum_and_says_so(tmp_path: Path) -> None:
    table = Table(tmp_path / "ledger.db")
    table.betting = replace_limits(table, CAPPED)
    table.wallets.deposit("p1", "gs1", 1_000_000)
    game = table.open()
    (first,) = table.betting.place(table.service.state, "gs1", "p1", "b1", "banker", 30_000)
    assert (first.stake, first.notice) == (30_000, None)
    (second,) = table.betting.place(table.service.state, "gs1", "p1", "b2", "banker", 25_000)
    assert second.stake == 10_000 and second.notice is not None and second.notice.startswith(MAXIMUM_REACHED)
    (retry,) = table.betting.place(table.service.state, "gs1", "p1", "b2", "banker", 25_000)
    assert (retry.stake, retry.notice) == (10_000, MAXIMUM_REACHED)  # the retry of the same bet: no second stake
    with pytest.raises(MaximumReached, match="nothing more is accepted there"):
        table.betting.place(table.service.state, "gs1", "p1", "b3", "banker", 1_000)
    assert table.wallets.balance("p1") == 1_000_000 - 40_000
    assert _open_stakes(table, game) == {"banker": 40_000}
    rows = {row["bet_id"]: (row["stake"], row["requested"]) for row in table.wallets.bet_rows("p1")}
    assert rows == {"b1": (30_000, 30_000), "b2": (10_000, 25_000)}


def replace_limits(table: Table, limits: TableLimits) -> BettingService:
    return BettingService("T1", table.wallets, limits, TABLE.pay_table, table.clock)


# The player's own maximum


def test_a_pin_is_needed_and_replacing_it_needs_the_current_one(table: Table) -> None:
    with pytest.raises(OwnMaximumRefused, match="p1 has no PIN yet"):
        table.wallets.set_own_maximum("p1", "gs1", 5_000, "1234")
    with pytest.raises(WalletError, match="no wallet for player 'ghost'"):
        table.wallets.set_pin("ghost", "gs1", "1234")
    with pytest.raises(WalletError, match="no wallet"):
        table.wallets.set_pin("p1", "gs2", "1234")  # another game server's player
    table.wallets.set_pin("p1", "gs1", "4821")
    with pytest.raises(WrongPin, match="the current PIN of p1 is needed"):
        table.wallets.set_pin("p1", "gs1", "9999")
    with pytest.raises(WrongPin):
        table.wallets.set_pin("p1", "gs1", "9999", current_pin="1111")
    table.wallets.set_pin("p1", "gs1", "9999", current_pin="4821")
    with pytest.raises(WrongPin, match="wrong PIN for p1: the own maximum is unchanged"):
        table.wallets.set_own_maximum("p1", "gs1", 5_000, "4821")
    assert table.wallets.own_maximum("p1").max_stake is None
    assert table.wallets.set_own_maximum("p1", "gs1", 5_000, "9999").max_stake == 5_000


def test_the_pin_is_stored_only_as_a_hash(tmp_path: Path) -> None:
    wallets = WalletStore(f"sqlite:///{tmp_path / 'w.db'}", ManualClock(START))
    wallets.deposit("p1", "gs1", 100)
    wallets.set_pin("p1", "gs1", "73519264")
    wallets.close()
    with sqlite3.connect(tmp_path / "w.db") as db:
        (stored,) = db.execute("SELECT pin_hash FROM player_pin WHERE player_id = 'p1'").fetchone()
    assert stored.startswith("scrypt$") and "73519264" not in stored
    assert b"73519264" not in (tmp_path / "w.db").read_bytes()


def test_the_own_maximum_changes_once_a_week_from_friday_five_utc(table: Table) -> None:
    clock = table.clock  # Sunday 29 November 2026, 12:00 UTC
    table.wallets.set_pin("p1", "gs1", "4821")
    state = table.wallets.set_own_maximum("p1", "gs1", 5_000, "4821")
    assert (state.max_stake, state.changed_at) == (5_000, START)
    assert state.next_change == datetime(2026, 12, 4, 5, tzinfo=UTC)
    assert table.wallets.set_own_maximum("p1", "gs1", 5_000, "4821") == state  # the same again: no change used up
    clock.advance((datetime(2026, 12, 4, 4, 59, 59, tzinfo=UTC) - START).total_seconds())  # Friday 04:59:59 UTC
    with pytest.raises(OwnMaximumRefused, match=r"own maximum this week already .* from 2026-12-04 05:00"):
        table.wallets.set_own_maximum("p1", "gs1", 8_000, "4821")
    assert table.wallets.own_maximum("p1").max_stake == 5_000
    clock.advance(1)  # Friday 00:00 at GMT-5
    assert table.wallets.own_maximum("p1").next_change is None
    assert table.wallets.set_own_maximum("p1", "gs1", None, "4821").max_stake is None  # removed: a change
    with pytest.raises(OwnMaximumRefused, match="this week already"):
        table.wallets.set_own_maximum("p1", "gs1", 1_000, "4821")
    with pytest.raises(OwnMaximumRefused, match="positive whole number"):
        table.wallets.set_own_maximum("p1", "gs1", 0, "4821")


def test_the_own_maximum_applies_on_every_table(tmp_path: Path) -> None:
    one = Table(tmp_path / "ledger.db", "T1")
    two = Table(tmp_path / "ledger.db", "T2")  # another table on the same wallets
    one.wallets.deposit("p1", "gs1", 1_000_000)
    one.wallets.set_pin("p1", "gs1", "4821")
    one.wallets.set_own_maximum("p1", "gs1", 2_000, "4821")
    one.open()
    two.open()
    for table in (one, two):
        table.bet("p1", f"{table.service.table_id}-a", "banker", 1_500)
        with pytest.raises(BetRejected, match=r"over this player's own maximum stake of 20\.00 USD for this bet"):
            table.bet("p1", f"{table.service.table_id}-b", "banker", 1_000)
        # A double is cut to what the own maximum leaves.
        (doubled,) = table.betting.double(table.service.state, "gs1", "p1")
        assert doubled.stake == 500 and doubled.notice is not None and MAXIMUM_REACHED in doubled.notice
    assert one.wallets.balance("p1") == 1_000_000 - 2 * 2_000


# A property: whatever is asked, in any order, an area never holds more than it may, and a refusal changes nothing.

Action = tuple[str, str, int]
ACTIONS = st.lists(
    st.tuples(st.sampled_from(["bet", "bet", "bet", "2 way", "undo", "double", "repeat"]),
              st.sampled_from(["banker", "player", "tie", "player_pair"]), st.integers(100, 50_000)),
    min_size=1, max_size=14,
)  # fmt: skip


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rounds=st.lists(ACTIONS, min_size=1, max_size=3), policy=st.sampled_from(OverMaximum),
       per_area=st.integers(1, 3), own=st.none() | st.integers(500, 30_000))  # fmt: skip
def test_random_betting_keeps_every_rule(tmp_path_factory: pytest.TempPathFactory, rounds: list[list[Action]],
                                         policy: OverMaximum, per_area: int, own: int | None) -> None:  # fmt: skip
    table = Table(tmp_path_factory.mktemp("rules") / "l.db")
    limits = replace(TABLE.limits, over_maximum=policy, max_bets_per_area=per_area)
    table.betting = replace_limits(table, limits)
    table.wallets.deposit("p1", "gs1", 300_000)
    if own is not None:
        table.wallets.set_pin("p1", "gs1", "2468")
        table.wallets.set_own_maximum("p1", "gs1", own, "2468")
    previous = None
    for number, actions in enumerate(rounds):
        game = table.open()
        for n, (action, bet_type, stake) in enumerate(actions):
            before = (table.wallets.entries("p1"), table.wallets.bets(game, "p1"))
            state = table.service.state
            had_bets = any(bet.status == "open" for bet in before[1])
            try:
                if action == "undo":
                    table.betting.undo_last(state, "p1")
                elif action == "double":
                    table.betting.double(state, "gs1", "p1")
                elif action == "repeat":
                    table.betting.repeat(state, "gs1", "p1", previous or "none")
                    # Only before the first bet of the round; once there are bets, only a retry, which changes nothing.
                    assert not had_bets or (table.wallets.entries("p1"), table.wallets.bets(game, "p1")) == before
                else:
                    table.betting.place(state, "gs1", "p1", f"{game}-{n}", bet_type if action == "bet" else action,
                                        stake)  # fmt: skip
            except (BetRejected, WalletError):
                assert (table.wallets.entries("p1"), table.wallets.bets(game, "p1")) == before  # nothing changed
            open_bets = table.wallets.bets(game, "p1", status="open")
            for area in {bet.bet_type for bet in open_bets}:
                on_area = [bet for bet in open_bets if bet.bet_type is area]
                assert len(on_area) <= per_area
                assert sum(bet.stake for bet in on_area) <= min(limits.bets[area].maximum, own or 10**12)
            assert table.wallets.balance("p1") == table.wallets.ledger_sum("p1") >= 0
        previous = game
        table.deal("QH 9D 2C 10S" if number % 2 else "9C 2D KH 10S")
    table.wallets.close()


def test_bets_placed_before_the_migration_keep_working(tmp_path: Path) -> None:
    """A bet row from before revision 0005 has no `requested`: it reads as asked = accepted, and a retry matches."""
    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = open_engine(make_url(url))
    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0004")
        connection.execute(text("INSERT INTO wallet VALUES ('p1', 'gs1', 9000)"))
        connection.execute(text(
            "INSERT INTO bet (bet_id, game_server, player_id, table_id, game_id, bet_type, stake, status, placed_at, "
            "placed_order) VALUES ('old', 'gs1', 'p1', 'T1', 'G1', 'banker', 1000, 'open', 'x', 1)"))  # fmt: skip
    engine.dispose()
    wallets = WalletStore(url, ManualClock(START))  # brings the database to the newest revision
    (old,) = wallets.bets("G1", "p1")
    assert (old.stake, old.notice) == (1_000, None)
    again = wallets.place(PlacedBet("old", "gs1", "p1", "T1", "G1", BANKER, 1_000), limits=TABLE.limits)
    assert again == old and wallets.balance("p1") == 9_000
    wallets.close()
