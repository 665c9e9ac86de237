"""The live shoe figures (`GET /api/tables/{table}/shoe-figures`): the numbers of `studio odds --removed` for the cards
out of the table's shoe, after every card, their history through the shoe, the edge alert (logged, attributable), who
may read them, and a restart that keeps the shoe's history."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dealer_ui.app import create_app
from dealer_ui.runtime import Studio, StudioSettings
from dealer_ui.shoe_figures import players_edge_percent
from studio.clock import ManualClock
from studio.domain.analysis import analyse
from studio.domain.cards import parse_cards, remove_cards, shoe_composition
from studio.domain.roles import Role
from studio.settings import load_pay_table
from studio_cli.main import main
from tests.server.conftest import T1, Desk, session_for

THRESHOLD = "-1.05"  # the Banker's edge for the players is -1.058% in a full shoe, -1.046% once 2D and 3D are out
BURN = ("2D", "3D")  # the shuffle burn of T1 (burn_after_shuffle = 2)
ROUND = ("9H", "2S", "KD", "3C")


def studio_app(folder: Path, clock: ManualClock) -> TestClient:
    table = folder / "t1.toml"
    table.write_text(T1.replace('id = "T1"', f'id = "T1"\nedge_alert_threshold = "{THRESHOLD}"'))
    return TestClient(create_app(StudioSettings(database=str(folder / "s.db"), demo=True, table_files=(table,)), clock))


@pytest.fixture
def desk(tmp_path: Path, clock: ManualClock) -> Iterator[Desk]:
    with studio_app(tmp_path, clock) as client:
        studio: Studio = client.app.state.studio  # type: ignore[attr-defined]
        yield Desk(client, studio, "T1", session_for(studio, "dealer", Role.DEALER),
                   session_for(studio, "pitboss", Role.PIT_BOSS))  # fmt: skip


def figures(desk: Desk, who: dict[str, str] | None = None) -> dict[str, Any]:
    response = desk.client.get("/api/tables/T1/shoe-figures", headers=who or desk.pit_boss)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def odds_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], removed: list[str]) -> dict[str, Any]:
    """`studio odds --removed FILE --json` for these cards, as a person would run it."""
    path = tmp_path / "removed.txt"
    path.write_text(" ".join(removed))
    capsys.readouterr()
    assert main(["odds", "--removed", str(path), "--json"]) == 0
    answer: dict[str, Any] = json.loads(capsys.readouterr().out)
    return answer


CLI_FIELDS = ("decks", "cards_remaining", "pay_table", "probabilities", "exact_probabilities", "bets")


def test_after_every_card_the_figures_are_those_of_studio_odds_removed(
    desk: Desk, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert figures(desk)["shoe"] is None  # before the first cut card
    desk.ok("shuffle")
    desk.ok("cut", json={})
    cut = figures(desk)
    assert (cut["shoe"], cut["cards_out"], cut["removed"], cut["cards_remaining"]) == (1, 0, [], 416)
    out: list[str] = []
    for code in (*BURN, *ROUND):
        if code == ROUND[0]:
            desk.to_dealing()
        desk.card(code)
        out.append(code)
        answer = figures(desk)
        assert answer["up_to_date"] and answer["seq"] == desk.history[-1]["logged"][0]["seq"]  # the card's record
        assert sorted(answer["removed"]) == sorted(out) and answer["cards_out"] == len(out)
        cli = odds_cli(tmp_path, capsys, answer["removed"])
        assert {key: answer[key] for key in CLI_FIELDS} == {key: cli[key] for key in CLI_FIELDS}
    history = figures(desk)["history"]
    assert [point["cards_out"] for point in history] == list(range(len(out) + 1))  # the cut, then every card
    full = odds_cli(tmp_path, capsys, [])
    assert history[0]["house_edge"] == {bet: value["house_edge"] for bet, value in full["bets"].items()}


def test_the_figures_are_for_staff(desk: Desk) -> None:
    surveillance = session_for(desk.studio, "surveillance", Role.SURVEILLANCE)
    assert figures(desk, surveillance)["shoe"] is None and figures(desk, desk.dealer)["shoe"] is None
    refused = desk.client.get(
        "/api/tables/T1/shoe-figures", headers={"X-API-Key": desk.studio.users.add_api_key("operator-1")}
    )
    assert refused.status_code == 403
    assert desk.client.get("/api/tables/T1/shoe-figures").status_code == 401
    assert desk.client.get("/api/tables/T9/shoe-figures", headers=desk.pit_boss).status_code == 404


def test_a_bet_turning_beyond_the_threshold_raises_one_alert_logged_with_who_and_where(
    desk: Desk, caplog: pytest.LogCaptureFixture
) -> None:
    pay_table = load_pay_table("standard")
    shoe = shoe_composition(8)
    expected = [players_edge_percent(analyse(remove_cards(shoe, parse_cards(" ".join(BURN[:n]))), pay_table))
                for n in range(len(BURN) + 1)]  # fmt: skip
    threshold = Fraction(THRESHOLD)
    assert all(edge <= threshold for edge in expected[0].values())  # nothing at the cut
    crossed = next(n for n, edges in enumerate(expected) if edges["banker"] > threshold)
    assert [bet for bet, edge in expected[crossed].items() if edge > threshold] == ["banker"]
    desk.ok("shuffle")
    desk.ok("cut", json={})
    with caplog.at_level(logging.WARNING, logger="dealer_ui.shoe_figures"):
        desk.deal(*BURN)
        answer = figures(desk)
    assert answer["edge_alert_threshold"] == THRESHOLD and answer["alerting"] == ["banker"]
    [alert] = answer["alerts"]
    card_seq = answer["history"][crossed]["seq"]
    assert alert["bet"] == "banker" and alert["seq"] == card_seq and alert["cards_out"] == crossed
    assert alert["players_edge_percent"] == pytest.approx(float(expected[crossed]["banker"]))
    assert alert["card_by"] == "dealer:dealer" and alert["shoe"] == 1
    [line] = [record for record in caplog.records if record.name == "dealer_ui.shoe_figures"]
    assert line.levelno == logging.WARNING
    assert line.getMessage().startswith(
        f"table T1: banker favours the players by {float(expected[crossed]['banker']):.3f}%"
    )
    assert f"after the record at seq {card_seq} (CardBurned by dealer:dealer" in line.getMessage()
    assert (line.table, line.seq, line.actor) == ("T1", card_seq, "system:shoe-figures")  # type: ignore[attr-defined]
    # It stays beyond the threshold: no second alert for the same bet.
    desk.to_dealing()
    desk.card("QS")
    assert len(figures(desk)["alerts"]) == 1 or figures(desk)["alerts"][1]["bet"] != "banker"


def test_a_restart_rebuilds_the_shoe_history_from_the_log(tmp_path: Path, clock: ManualClock) -> None:
    with studio_app(tmp_path, clock) as client:
        studio: Studio = client.app.state.studio  # type: ignore[attr-defined]
        desk = Desk(client, studio, "T1", session_for(studio, "dealer", Role.DEALER),
                    session_for(studio, "pitboss", Role.PIT_BOSS))  # fmt: skip
        desk.to_ready()
        desk.to_dealing()
        desk.deal(*ROUND)
        before = figures(desk)
    with studio_app(tmp_path, clock) as client:
        studio = client.app.state.studio  # type: ignore[attr-defined]
        desk = Desk(client, studio, "T1", session_for(studio, "dealer", Role.DEALER),
                    session_for(studio, "pitboss", Role.PIT_BOSS))  # fmt: skip
        after = figures(desk)
    assert after["history"] == before["history"] and after["removed"] == before["removed"]
    assert after["alerts"] == before["alerts"] and len(after["history"]) == 1 + len(BURN) + len(ROUND)


ANALYSIS_THEN_WAIT = """
import sys, time
from dealer_ui.shoe_figures import _ANALYSIS_PROCESS
from studio.domain.cards import shoe_composition
from studio.settings import load_pay_table
_ANALYSIS_PROCESS.analyse(shoe_composition(8), load_pay_table("standard"))
print(*_ANALYSIS_PROCESS._pool._processes, flush=True)
time.sleep(60)
"""


def _running(pid: int) -> bool:
    """The process exists and has not ended (a zombie waiting for its parent to collect it has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from Linux's /proc")
def test_the_analysis_process_ends_when_the_studio_is_killed() -> None:
    """A studio killed outright (SIGKILL: no clean shutdown) leaves no idle analysis process behind: before the fix,
    every killed or restarted studio left one for ever."""
    with subprocess.Popen([sys.executable, "-c", ANALYSIS_THEN_WAIT], stdout=subprocess.PIPE, text=True) as studio:
        try:
            assert studio.stdout is not None
            (worker,) = (int(pid) for pid in studio.stdout.readline().split())
            assert _running(worker)
        finally:
            studio.kill()
    deadline = time.monotonic() + 10
    while _running(worker):
        assert time.monotonic() < deadline, "the analysis process outlived the studio's"
        time.sleep(0.05)
