"""Group commit of bets (issue 17): many requests, one transaction; each request keeps its own rules and its own answer.

A group must leave exactly what placing its requests one by one would have left: the same bets accepted with the same
stakes, the same refusals, the same balances (each the sum of its ledger); a refused request changes nothing and does
not fail the others; a failed commit places none of the group; "no more bets" places what waits first, and a request
that reaches its group after it is refused as late.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.exc import OperationalError

from studio import wallets as wallets_module
from studio.bet_batches import BetBatches
from studio.betting import LATE, BetRequest
from studio.database import DatabaseUnavailable
from studio.domain import commands as c
from studio.domain.errors import BetRejected
from studio.domain.paytable import BetType
from studio.wallets import OtherGameServer, PlacedBet, WalletStore
from tests.test_betting import DEALER, Table


@pytest.fixture(params=["sqlite", "postgresql"])
def table(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Table]:
    """The ledger of tests/test_betting.py, on both databases."""
    if request.param == "postgresql":
        table = Table(str(request.getfixturevalue("postgres_url")))
    else:
        table = Table(tmp_path / "ledger.db")
    yield table
    table.wallets.close()


def _ask(player: str, bet_id: str, bet_type: str, stake: int, game_server: str = "gs1") -> BetRequest:
    return BetRequest(game_server, player, bet_id, bet_type, stake)


def _stored(wallets: WalletStore, game_id: str) -> dict[str, tuple[str, int]]:
    return {bet.bet_id: (bet.player_id, bet.stake) for bet in wallets.bets(game_id)}


def test_a_mixed_group_leaves_exactly_the_accepted_requests_durable(table: Table, tmp_path: Path) -> None:
    table.wallets.deposit("p1", "gs1", 10_000)
    table.wallets.deposit("p2", "gs1", 100_000)
    table.wallets.deposit("p3", "gs2", 100_000)
    game = table.open()
    answers = table.betting.place_many(table.service.state, [
        _ask("p1", "a", "banker", 6_000),  # placed
        _ask("p1", "b", "player", 6_000),  # refused: the balance left after "a" is 4,000
        _ask("p2", "c", "tie", 100_000),  # refused: over the table maximum
        _ask("ghost", "d", "banker", 1_000),  # refused: no wallet
        _ask("p3", "e", "banker", 1_000),  # refused: another game server's player
        _ask("p2", "f", "2 way", 1_000),  # placed: both pair bets, together
        _ask("p1", "g", "player", 4_000),  # placed: exactly what p1 has left
        _ask("p1", "a", "banker", 6_000),  # a retry of "a": the same bet, nothing more taken
        _ask("p2", "a", "player", 1_000),  # refused: "a" is p1's bet
    ])  # fmt: skip
    placed = [a for a in answers if not isinstance(a, BetRejected)]
    refusals = [str(a) for a in answers if isinstance(a, BetRejected)]
    assert [[bet.bet_id for bet in bets] for bets in placed] == [
        ["a"],
        ["f:player_pair", "f:banker_pair"],
        ["g"],
        ["a"],
    ]
    assert "balance 4000 is less than the stake" in refusals[0]
    assert "over the table maximum" in refusals[1]
    assert "no wallet for player 'ghost'" in refusals[2]
    assert isinstance(answers[4], OtherGameServer) and refusals[3] == "player 'p3' belongs to another game server"
    assert "bet id 'a' was used for another bet" in refusals[4]
    reopened = WalletStore(table.wallets._engine.url.render_as_string(hide_password=False), table.clock)
    assert _stored(reopened, game) == {"a": ("p1", 6_000), "f:player_pair": ("p2", 1_000),
                                       "f:banker_pair": ("p2", 1_000), "g": ("p1", 4_000)}  # fmt: skip
    assert (reopened.balance("p1"), reopened.balance("p2"), reopened.balance("p3")) == (0, 98_000, 100_000)
    for player in ("p1", "p2", "p3"):
        assert reopened.balance(player) == reopened.ledger_sum(player)
    assert [e["kind"] for e in reopened.entries("p1")] == ["deposit", "stake", "stake"]
    reopened.close()


def test_each_request_sees_the_requests_before_it_in_its_group(table: Table) -> None:
    """Three bets per area, the own maximum and repeat are counted with the group's earlier requests."""
    table.wallets.deposit("p1", "gs1", 1_000_000)
    table.open()
    answers = table.betting.place_many(table.service.state, [_ask("p1", f"b{n}", "banker", 1_000) for n in range(4)])
    assert [isinstance(a, BetRejected) for a in answers] == [False, False, False, True]
    assert "at most 3 bets per betting area" in str(answers[3])
    ties = table.betting.place_many(
        table.service.state, [_ask("p1", "t1", "tie", 3_000), _ask("p1", "t2", "tie", 3_000)]
    )
    assert not isinstance(ties[0], BetRejected) and "over the table maximum" in str(ties[1])  # 60.00 > 50.00
    assert table.wallets.balance("p1") == 1_000_000 - 3 * 1_000 - 3_000 == table.wallets.ledger_sum("p1")


def test_a_group_reads_each_players_own_maximum_in_force_and_the_bank_they_hold(table: Table) -> None:
    """The players of a group are read in one statement: the last of a player's own maximums is in force, a player
    without one has the table's, and a player holding a bank anywhere does not bet."""
    for player in ("p1", "p2", "p3", "p4"):
        table.wallets.deposit(player, "gs1", 1_000_000)
    table.wallets.set_pin("p1", "gs1", "4821")
    table.wallets.set_own_maximum("p1", "gs1", 5_000, "4821")
    table.clock.advance(7 * 24 * 3600)  # a week later: a change is allowed again
    table.wallets.set_own_maximum("p1", "gs1", 2_000, "4821")  # the one in force
    table.wallets.set_pin("p4", "gs1", "1357")
    table.wallets.set_own_maximum("p4", "gs1", 3_000, "1357")
    table.wallets.take_bank("T9", "p3", "gs1", True, 0)
    game = table.open()
    answers = table.betting.place_many(table.service.state, [
        _ask("p1", "a", "banker", 3_000),  # refused: over p1's own maximum in force (20.00), not the earlier 50.00
        _ask("p1", "b", "banker", 2_000),
        _ask("p2", "c", "banker", 30_000),  # no own maximum: the table's
        _ask("p3", "d", "banker", 1_000),  # refused: holds the bank at T9
        _ask("p4", "e", "banker", 3_000),
    ])  # fmt: skip
    refusals = {n: str(a) for n, a in enumerate(answers) if isinstance(a, BetRejected)}
    assert refusals.keys() == {0, 3}
    assert "over this player's own maximum stake of 20.00" in refusals[0]
    assert "p3 holds the bank at T9 and cannot bet" in refusals[3]
    assert _stored(table.wallets, game) == {"b": ("p1", 2_000), "c": ("p2", 30_000), "e": ("p4", 3_000)}


def test_the_bank_covers_every_bet_of_the_group_together(tmp_path: Path) -> None:
    table = Table(tmp_path / "ledger.db", player_banker=True)
    try:
        table.wallets.deposit("bank", "gs1", 100_000)
        for player in ("p1", "p2", "p3"):
            table.wallets.deposit(player, "gs1", 100_000)
        game = table.open()
        table.wallets.approve(game, "bank")
        answers = table.betting.place_many(table.service.state, [
            _ask("p1", "a", "tie", 5_000), _ask("p2", "b", "tie", 5_000), _ask("p3", "c", "tie", 5_000),
            _ask("p3", "d", "player", 1_000)])  # fmt: skip
        accepted = [not isinstance(a, BetRejected) for a in answers]
        # Two ties of 50.00 need 800.00 and some commission from the bank; a third would need more than its 1,000.00.
        assert accepted == [True, True, False, True]
        assert "the bank cannot cover this bet" in str(answers[2])
        one_by_one = Table(tmp_path / "again.db", player_banker=True)
        try:
            one_by_one.wallets.deposit("bank", "gs1", 100_000)
            for player in ("p1", "p2", "p3"):
                one_by_one.wallets.deposit(player, "gs1", 100_000)
            again = one_by_one.open()
            one_by_one.wallets.approve(again, "bank")
            alone = []
            for request in [_ask("p1", "a", "tie", 5_000), _ask("p2", "b", "tie", 5_000), _ask("p3", "c", "tie",
                            5_000), _ask("p3", "d", "player", 1_000)]:  # fmt: skip
                try:
                    one_by_one.bet(request.player_id, request.bet_id, request.bet_type, request.stake)
                    alone.append(True)
                except BetRejected:
                    alone.append(False)
            assert alone == accepted  # the group decided as one request after the other would have
        finally:
            one_by_one.wallets.close()
    finally:
        table.wallets.close()


def test_a_failed_commit_places_none_of_the_group(table: Table, monkeypatch: pytest.MonkeyPatch) -> None:
    table.wallets.deposit("p1", "gs1", 100_000)
    game = table.open()

    def broken(self: Any, conn: Any) -> None:
        raise OperationalError("INSERT", {}, Exception("disk I/O error"))

    monkeypatch.setattr(wallets_module._Batch, "write", broken)
    with pytest.raises(DatabaseUnavailable):
        table.betting.place_many(table.service.state, [_ask("p1", "a", "banker", 1_000), _ask("p1", "b", "tie", 500)])
    assert table.wallets.bets(game) == [] and table.wallets.balance("p1") == 100_000


# Group commit and one-by-one: the same outcome, whatever the requests and however they are grouped.

PLAYERS = ["p1", "p2", "p3"]
TYPES = ["banker", "player", "tie", "player_pair", "2 way"]
requests_strategy = st.lists(
    st.tuples(st.sampled_from(PLAYERS), st.integers(0, 14), st.sampled_from(TYPES), st.integers(1, 60)),
    min_size=1,
    max_size=30,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(asked=requests_strategy, cuts=st.lists(st.integers(1, 30), max_size=6))
def test_a_group_commit_decides_as_one_request_after_the_other(tmp_path_factory: pytest.TempPathFactory,
                                                               asked: list[tuple[str, int, str, int]],
                                                               cuts: list[int]) -> None:  # fmt: skip
    folder = tmp_path_factory.mktemp("groups")
    grouped, alone = Table(folder / "grouped.db"), Table(folder / "alone.db")
    try:
        for table in (grouped, alone):
            for n, player in enumerate(PLAYERS):
                table.wallets.deposit(player, "gs1", 5_000 * (n + 1))
            table.open()
        requests = [_ask(player, f"b{number}", bet_type, units * 100) for player, number, bet_type, units in asked]
        grouped_answers: list[list[PlacedBet] | BetRejected] = []
        edges = sorted({0, len(requests), *(cut for cut in cuts if cut < len(requests))})
        for start, end in itertools.pairwise(edges):
            grouped_answers += grouped.betting.place_many(grouped.service.state, requests[start:end])
        alone_answers: list[list[PlacedBet] | BetRejected] = []
        for request in requests:
            try:
                alone_answers.append(alone.betting.place(alone.service.state, request.game_server, request.player_id,
                                                         request.bet_id, request.bet_type, request.stake))  # fmt: skip
            except BetRejected as refused:
                alone_answers.append(refused)
        assert [_outcome(a) for a in grouped_answers] == [_outcome(a) for a in alone_answers]
        game = grouped.service.state.round.game_id  # type: ignore[union-attr]
        other = alone.service.state.round.game_id  # type: ignore[union-attr]
        assert _stored(grouped.wallets, game) == _stored(alone.wallets, other)
        for player in PLAYERS:
            assert grouped.wallets.balance(player) == alone.wallets.balance(player)
            assert grouped.wallets.balance(player) == grouped.wallets.ledger_sum(player) >= 0
    finally:
        grouped.wallets.close()
        alone.wallets.close()


def _outcome(answer: list[PlacedBet] | BetRejected) -> Any:
    if isinstance(answer, BetRejected):
        return ("refused", str(answer))
    return [(bet.bet_id, bet.bet_type, bet.stake, bet.notice) for bet in answer]


# The queue: concurrent requests, one writer, "no more bets".


def test_concurrent_requests_are_answered_once_durable_and_the_balances_equal_the_ledger(tmp_path: Path) -> None:
    table = Table(tmp_path / "ledger.db")
    writer = ThreadPoolExecutor(1, thread_name_prefix="table")
    try:
        for n in range(40):
            table.wallets.deposit(f"p{n}", "gs1", 2_000)
        game = table.open()
        batches = BetBatches(table.betting, lambda: table.service.state, writer)
        groups: list[int] = []
        place_many = table.betting.place_many

        def counted(state: Any, requests: Any) -> Any:
            groups.append(len(requests))
            return place_many(state, requests)

        table.betting.place_many = counted  # type: ignore[method-assign]

        async def burst() -> list[Any]:
            hold = asyncio.Event()
            loop = asyncio.get_running_loop()
            writer.submit(lambda: asyncio.run_coroutine_threadsafe(hold.wait(), loop).result())  # the writer is busy
            asks = [asyncio.ensure_future(batches.place("gs1", f"p{n % 40}", f"b{n}", "banker", 1_000))
                    for n in range(120)]  # fmt: skip
            await asyncio.sleep(0.01)  # every request waits in the queue
            assert not any(ask.done() for ask in asks)  # none is answered before its group is committed
            hold.set()
            return await asyncio.gather(*asks, return_exceptions=True)

        answers = asyncio.run(burst())
        accepted = [a for a in answers if not isinstance(a, BaseException)]
        refused = [a for a in answers if isinstance(a, BetRejected)]
        assert len(accepted) == 80 and len(refused) == 40  # each player had 2,000: two bets of 1,000
        assert all("balance 0 is less than the stake" in str(r) for r in refused)
        assert groups == [120]  # the requests that waited together were placed together
        assert len(_stored(table.wallets, game)) == 80
        for n in range(40):
            assert table.wallets.balance(f"p{n}") == 0 == table.wallets.ledger_sum(f"p{n}")
    finally:
        writer.shutdown(wait=True)
        table.wallets.close()


def test_no_more_bets_places_what_waits_first_and_later_requests_are_late(tmp_path: Path) -> None:
    table = Table(tmp_path / "ledger.db")
    writer = ThreadPoolExecutor(1, thread_name_prefix="table")
    try:
        table.wallets.deposit("p1", "gs1", 100_000)
        game = table.open()
        batches = BetBatches(table.betting, lambda: table.service.state, writer)

        async def around_the_close() -> tuple[Any, Any]:
            hold = asyncio.Event()
            loop = asyncio.get_running_loop()
            writer.submit(lambda: asyncio.run_coroutine_threadsafe(hold.wait(), loop).result())  # the writer is busy

            def close() -> None:  # what the studio's writer does for "no more bets"
                batches.flush()
                table.clock.advance(20)
                table.service.handle(c.CloseBetting(DEALER))

            closing = loop.run_in_executor(writer, close)  # "no more bets" is next on the writer...
            early = asyncio.ensure_future(batches.place("gs1", "p1", "early", "banker", 1_000))
            await asyncio.sleep(0.01)  # ... and "early" waits in the queue, its group behind the close
            assert not early.done()
            hold.set()
            await closing
            late = await asyncio.gather(batches.place("gs1", "p1", "late", "banker", 1_000), return_exceptions=True)
            return await early, late[0]

        early, late = asyncio.run(around_the_close())
        assert [bet.bet_id for bet in early] == ["early"]
        assert isinstance(late, BetRejected) and str(late) == LATE
        assert _stored(table.wallets, game) == {"early": ("p1", 1_000)}
        assert table.wallets.balance("p1") == 99_000 == table.wallets.ledger_sum("p1")
    finally:
        writer.shutdown(wait=True)
        table.wallets.close()


def test_a_request_that_arrived_in_time_is_taken_even_if_its_group_runs_after_the_timer(tmp_path: Path) -> None:
    """The timer is checked at the request's arrival; the phase when its group runs."""
    table = Table(tmp_path / "ledger.db")
    try:
        table.wallets.deposit("p1", "gs1", 100_000)
        table.open()
        arrived = table.clock.now()
        table.clock.advance(20)  # the timer ran out while the request waited; "no more bets" not logged yet
        in_time = BetRequest("gs1", "p1", "a", "banker", 1_000, arrived)
        too_late = BetRequest("gs1", "p1", "b", "banker", 1_000, table.clock.now())
        answers = table.betting.place_many(table.service.state, [in_time, too_late])
        assert not isinstance(answers[0], BetRejected) and str(answers[1]) == LATE
        assert BetType.BANKER in {bet.bet_type for bet in answers[0]}
    finally:
        table.wallets.close()


def test_place_many_with_no_request_writes_nothing(table: Table) -> None:
    table.open()
    assert table.betting.place_many(table.service.state, []) == []
