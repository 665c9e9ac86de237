"""The supervisor and the two-source reconciler, with an in-memory source, a recording table and a fake sleep."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from drivers.memory_source import MemorySource
from studio.backoff import Backoff
from studio.domain import commands as c
from studio.domain.cards import Card
from studio.domain.errors import ProcedureError
from studio.domain.reads import DeviceReport, ReportKind
from studio.domain.reconcile import Reconciler
from studio.domain.records import StoreError
from studio.sources import SourceHealth, SourceState
from studio.supervisor import Supervisor, command_for

AT = datetime(2026, 11, 29, 12, tzinfo=UTC)
QH, KS = Card.parse("QH"), Card.parse("KS")


def card(source: str, code: Card | None, seq: int) -> DeviceReport:
    kind = ReportKind.CARD if code is not None else ReportKind.MISREAD
    return DeviceReport(source, kind, AT, code, seq, 1.0, f"raw-{source}-{seq}")


def test_backoff_doubles_up_to_the_cap_and_resets() -> None:
    backoff = Backoff(initial=0.5, factor=2, cap=3)
    assert [backoff.next_delay() for _ in range(5)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    backoff.reset()
    assert backoff.next_delay() == 0.5


@pytest.mark.parametrize(
    ("report", "expected"),
    [
        (card("shoe", QH, 1), c.DrawCard("device:shoe", c.CardRead(QH, "shoe", 1, 1.0, "raw-shoe-1"))),
        (card("shoe", None, 2), c.DrawCard("device:shoe", c.CardRead(None, "shoe", 2, 1.0, "raw-shoe-2"))),
        (DeviceReport("shoe", ReportKind.CUT_CARD, AT), c.ReportCutCard("device:shoe", "shoe")),
        (DeviceReport("shoe", ReportKind.SHOE_REMOVED, AT),
         c.ReportSourceFailure("device:shoe", "shoe", "the shoe was removed")),
        (DeviceReport("shoe", ReportKind.FAULT, AT, detail="lid open"),
         c.ReportSourceFailure("device:shoe", "shoe", "device fault: lid open")),
        (DeviceReport("shoe", ReportKind.SHOE_INSERTED, AT), None),
    ],
)  # fmt: skip
def test_each_report_becomes_the_right_command(report: DeviceReport, expected: c.Command | None) -> None:
    assert command_for(report) == expected


class Harness:
    """A supervisor over memory sources; sleeps are recorded and yield to the loop without real time passing."""

    def __init__(self, *sources: MemorySource, reconciler: Reconciler | None = None) -> None:
        self.commands: list[c.Command] = []
        self.sleeps: list[float] = []
        self.states: list[tuple[str, SourceState]] = []
        self.refuse: type[c.Command] | None = None
        self.log_down_for = 0  # how many of the next commands find the log unavailable
        self.clock = 0.0

        async def sleep(seconds: float) -> None:
            self.sleeps.append(seconds)
            self.clock += seconds
            await asyncio.sleep(0)

        def handle(command: c.Command) -> None:
            if self.refuse is not None and isinstance(command, self.refuse):
                raise ProcedureError("suspended", type(command).__name__, "not allowed now")
            if self.log_down_for:
                self.log_down_for -= 1
                raise StoreError("event store postgresql: connection refused")
            self.commands.append(command)

        self.supervisor = Supervisor(
            handle, list(sources), sleep=sleep, on_state=lambda s, h: self.states.append((s, h.state)),
            health_interval=1.0, reconciler=reconciler, monotonic=lambda: self.clock,
        )  # fmt: skip

    async def settle(self, rounds: int = 20) -> None:
        for _ in range(rounds):
            await asyncio.sleep(0)


def test_reports_reach_the_table_in_order_and_a_disconnect_reconnects_with_backoff() -> None:
    async def scenario() -> None:
        shoe = MemorySource("shoe", failing_opens=2)
        harness = Harness(shoe)
        task = asyncio.create_task(harness.supervisor.run())
        await harness.settle()
        # Two failed opens: each reported to the table, then backoff 0.5 s and 1 s before the third try succeeds.
        failures = [cmd for cmd in harness.commands if isinstance(cmd, c.ReportSourceFailure)]
        assert len(failures) == 2 and "device not present" in failures[0].detail
        assert [s for s in harness.sleeps if s != 1.0][:1] == [0.5]
        assert harness.states[-1] == ("shoe", SourceState.CONNECTED)
        harness.commands.clear()
        shoe.push(card("shoe", QH, 1))
        shoe.push(card("shoe", KS, 2))
        await harness.settle()
        assert [cmd.read.card for cmd in harness.commands if isinstance(cmd, c.DrawCard)] == [QH, KS]
        shoe.disconnect()
        await harness.settle()
        assert ("shoe", SourceState.DISCONNECTED) in harness.states
        assert any(isinstance(cmd, c.ReportSourceFailure) and "unplugged" in cmd.detail for cmd in harness.commands)
        assert harness.states[-1] == ("shoe", SourceState.CONNECTED)  # reconnected after the backoff
        assert shoe.opens == 4
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert shoe.health().state is SourceState.DISCONNECTED  # closed on the way out

    asyncio.run(scenario())


def test_a_report_the_table_refuses_is_kept_not_lost() -> None:
    async def scenario() -> None:
        shoe = MemorySource("shoe")
        harness = Harness(shoe)
        harness.refuse = c.ReportCutCard
        task = asyncio.create_task(harness.supervisor.run())
        await harness.settle()
        shoe.push(DeviceReport("shoe", ReportKind.CUT_CARD, AT))
        await harness.settle()
        assert len(harness.supervisor.refused) == 1
        assert harness.supervisor.refused[0][0].kind is ReportKind.CUT_CARD
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())


def test_a_card_the_log_could_not_take_is_offered_again_until_it_is_logged_and_the_next_waits_behind_it() -> None:
    async def scenario() -> None:
        shoe = MemorySource("shoe")
        harness = Harness(shoe)
        harness.supervisor.log_retry = 0.25
        task = asyncio.create_task(harness.supervisor.run())
        await harness.settle()
        harness.log_down_for = 3
        shoe.push(card("shoe", QH, 1))
        shoe.push(card("shoe", KS, 2))
        await harness.settle(60)
        assert [cmd.read.card for cmd in harness.commands if isinstance(cmd, c.DrawCard)] == [QH, KS]  # once each
        assert harness.sleeps.count(0.25) == 3  # three offers refused by the log, then the fourth taken
        assert harness.supervisor.refused == []  # a log that did not answer is not a refusal: nothing is set aside
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())


def test_reconciler_accepts_agreement_once_with_both_evidences() -> None:
    reconciler = Reconciler("shoe", "camera", window=2.0)
    assert reconciler.offer(card("shoe", QH, 1), 0.0) == []
    (command,) = reconciler.offer(card("camera", QH, 7), 0.5)
    assert isinstance(command, c.DrawCard)
    assert command.read.card == QH and command.read.source == "shoe"
    assert command.read.raw == "shoe: raw-shoe-1 | camera: raw-camera-7"


def test_reconciler_suspends_on_disagreement_a_misread_or_a_lone_card() -> None:
    reconciler = Reconciler("shoe", "camera", window=2.0)
    reconciler.offer(card("camera", KS, 1), 0.0)
    (disagree,) = reconciler.offer(card("shoe", QH, 1), 0.1)
    assert isinstance(disagree, c.ReportDisagreement)
    assert disagree.detail == "sources disagree: shoe read QH, camera read KS"
    assert [read.card for read in disagree.reads] == [QH, KS]
    reconciler.offer(card("shoe", QH, 2), 1.0)
    (misread,) = reconciler.offer(card("camera", None, 2), 1.2)
    assert isinstance(misread, c.ReportDisagreement) and "camera could not read the card" in misread.detail
    assert reconciler.offer(card("shoe", KS, 3), 5.0) == []
    assert reconciler.expire(6.9) == []
    (lone,) = reconciler.expire(7.1)
    assert isinstance(lone, c.ReportDisagreement)
    assert lone.detail == "shoe read KS; camera saw no card within 2 s"


def test_supervisor_with_two_sources_reports_a_lone_card_after_the_window() -> None:
    async def scenario() -> None:
        shoe, camera = MemorySource("shoe"), MemorySource("camera")
        harness = Harness(shoe, camera, reconciler=Reconciler("shoe", "camera", window=2.0))
        task = asyncio.create_task(harness.supervisor.run())
        await harness.settle()
        shoe.push(card("shoe", QH, 1))
        camera.push(card("camera", QH, 1))
        await harness.settle()
        assert [type(cmd) for cmd in harness.commands] == [c.DrawCard]
        shoe.push(card("shoe", KS, 2))
        await harness.settle(200)  # fake time runs on with every sleep of the health and expiry loops
        assert isinstance(harness.commands[-1], c.ReportDisagreement)
        assert "camera saw no card" in harness.commands[-1].detail
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())


def test_health_changes_are_published_once() -> None:
    async def scenario() -> None:
        shoe = MemorySource("shoe")
        health = [SourceHealth(SourceState.CONNECTED)]
        shoe.health = lambda: health[0]  # type: ignore[method-assign]
        harness = Harness(shoe)
        task = asyncio.create_task(harness.supervisor.run())
        await harness.settle()
        health[0] = SourceHealth(SourceState.DEGRADED, "no heartbeat for 3 s")
        await harness.settle(50)
        assert harness.states.count(("shoe", SourceState.DEGRADED)) == 1
        assert harness.supervisor.states["shoe"].detail == "no heartbeat for 3 s"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
