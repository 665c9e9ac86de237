"""Surveillance finds a round by its game number, or by the start of it (a prefix is enough, whatever the case), and
reads every time it is given as UTC."""

from __future__ import annotations

from studio.clock import ManualClock
from studio.domain.roles import Role
from tests.server.conftest import NATURAL, Desk, session_for


def play_rounds(desk: Desk, clock: ManualClock, count: int) -> list[str]:
    games = []
    desk.to_ready()
    for _ in range(count):
        clock.advance(15)
        desk.to_dealing()
        desk.deal(*NATURAL)
        games.append(desk.history[-1]["table"]["last_result"]["game_id"])
    return games


def search(desk: Desk, **query: str) -> list[str]:
    who = session_for(desk.studio, "surveillance", Role.SURVEILLANCE)
    response = desk.client.get("/api/surveillance/rounds", params=query, headers=who)
    assert response.status_code == 200, response.text
    return [summary["game_id"] for summary in response.json()["rounds"]]


def test_a_round_is_found_by_its_game_number_or_a_prefix_of_it(desk: Desk, clock: ManualClock) -> None:
    games = play_rounds(desk, clock, 3)  # T1-20240501-120015-0001, T1-20240501-120030-0002, T1-20240501-120045-0003
    assert [game[:18] for game in games] == ["T1-20240501-120015", "T1-20240501-120030", "T1-20240501-120045"]
    assert search(desk, game=games[1]) == [games[1]]
    assert search(desk, game="T1-20240501-12") == games[::-1]  # newest first
    assert search(desk, game="t1-20240501-12001") == [games[0]]  # whatever the case
    assert search(desk, game="  T1-2024") == games[::-1]  # spaces around a pasted number do not count
    assert search(desk, game="T2-") == [] and search(desk, game="20240501") == []  # the start, not any part
    assert search(desk, game="T1-20240501-12", status="completed", limit="1") == [games[2]]


def test_times_without_a_zone_are_utc(desk: Desk, clock: ManualClock) -> None:
    games = play_rounds(desk, clock, 3)
    assert search(desk, since="2024-05-01T12:00:30") == [games[2], games[1]]
    assert search(desk, since="2024-05-01T14:00:30+02:00") == [games[2], games[1]]  # 12:00:30 UTC
    assert search(desk, until="2024-05-01 12:00:20") == [games[0]]
