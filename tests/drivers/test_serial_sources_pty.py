"""The serial card sources read the device simulator through a real kernel pseudo-terminal and pyserial."""

from __future__ import annotations

import asyncio
import contextlib
import random
from pathlib import Path

import pytest

from drivers.line_scanner.source import LineScannerSource
from drivers.simulator.pty_device import PtyDevice
from drivers.simulator.shoe_sim import Faults, ShoeSimulator
from drivers.smart_shoe.source import SmartShoeSource
from studio.domain import commands as c
from studio.domain.errors import ConfigError
from studio.domain.reads import DeviceReport, ReportKind
from studio.simulation import seeded_shoe
from studio.sources import SourceDisconnected, SourceState, SourceUnavailable
from studio.supervisor import Supervisor
from tests.waiting import until

CARDS = seeded_shoe(1, random.Random(4))


class Reader:
    """One reader over a source's reports for the whole test, as the supervisor has."""

    def __init__(self, source: SmartShoeSource | LineScannerSource) -> None:
        self.reports: list[DeviceReport] = []
        self.task = asyncio.create_task(self._read(source))

    async def _read(self, source: SmartShoeSource | LineScannerSource) -> None:
        async for report in source.reports():
            self.reports.append(report)

    async def until(self, count: int, timeout: float = 10.0) -> list[DeviceReport]:
        """The reports once `count` came, or all that came within `timeout` (the caller asserts what it expects)."""
        with contextlib.suppress(AssertionError):
            await until(lambda: len(self.reports) >= count, f"{count} reports", timeout)
        return self.reports

    async def stop(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError, SourceDisconnected):
            await self.task


async def collect(source: SmartShoeSource | LineScannerSource, sim: ShoeSimulator, draws: int,
                  want: int, timeout: float = 10.0) -> list[DeviceReport]:  # fmt: skip
    """Draw `draws` cards and gather reports until `want` of them came (or the timeout)."""
    reader = Reader(source)
    for _ in range(draws):
        sim.draw()
    reports = await reader.until(want, timeout)
    await reader.stop()
    return reports


def run_with_sim(sim: ShoeSimulator, body: object) -> None:
    sim.start()
    try:
        asyncio.run(body)  # type: ignore[arg-type]
    finally:
        sim.stop()


@pytest.mark.parametrize("baud", [9600, 115200])
def test_smart_shoe_cards_arrive_in_order_through_the_pty(baud: int) -> None:
    sim = ShoeSimulator(CARDS, "smart-shoe", device=PtyDevice(baud=baud), cut_card_at=5)

    async def body() -> None:
        source = SmartShoeSource("shoe-1", sim.device.path, baudrate=baud)
        await source.open()
        assert source.health().state is SourceState.CONNECTED
        reports = await collect(source, sim, draws=8, want=9)
        await source.close()
        await source.close()  # safe twice
        kinds = [r.kind for r in reports]
        assert kinds.count(ReportKind.CUT_CARD) == 1 and kinds.index(ReportKind.CUT_CARD) == 5
        cards = [r.card for r in reports if r.kind is ReportKind.CARD]
        assert cards == CARDS[:8]
        first = next(r for r in reports if r.kind is ReportKind.CARD)
        assert first.raw is not None and first.raw.startswith("02") and first.raw.endswith("03")
        assert first.at.tzinfo is not None

    run_with_sim(sim, body())


def test_smart_shoe_recovers_every_card_through_faults() -> None:
    faults = Faults(garbage=0.3, drop=0.2, duplicate=0.3, corrupt=0.2)
    sim = ShoeSimulator(CARDS, "smart-shoe", faults=faults, seed=3)

    async def body() -> None:
        source = SmartShoeSource("shoe-1", sim.device.path)
        await source.open()
        reader = Reader(source)
        for count in range(1, 31):  # one at a time, as a dealer draws
            sim.draw()
            await reader.until(count, timeout=5)
        await reader.stop()
        await source.close()
        reports = reader.reports
        assert [r.card for r in reports] == CARDS[:30]  # none lost, none doubled, none garbled
        assert len(source.link_errors) > 0  # the damage was seen and kept as evidence

    run_with_sim(sim, body())


def test_line_scanner_reads_cards_and_reports_a_garbled_line_as_a_misread() -> None:
    sim = ShoeSimulator(CARDS, "line", device=PtyDevice(baud=9600), faults=Faults(corrupt=0.5), seed=1)

    async def body() -> None:
        source = LineScannerSource("scanner-1", sim.device.path)
        await source.open()
        reports = await collect(source, sim, draws=12, want=12)
        await source.close()
        assert len(reports) == 12
        misreads = [r for r in reports if r.kind is ReportKind.MISREAD]
        assert misreads and all(r.raw and r.card is None for r in misreads)
        # A flipped bit may still spell another valid card (a line has no checksum): a second source is the remedy.
        clean = [r for r in reports if r.kind is ReportKind.CARD]
        assert sum(r.card == card for r, card in zip(reports, CARDS, strict=False)) >= len(clean) - 2

    run_with_sim(sim, body())


def test_a_missing_device_and_a_bad_config_fail_clearly(tmp_path: Path) -> None:
    async def body() -> None:
        with pytest.raises(SourceUnavailable, match="cannot open"):
            await SmartShoeSource("shoe-1", str(tmp_path / "ttyUSB9")).open()

    asyncio.run(body())
    with pytest.raises(ConfigError, match="url is required"):
        SmartShoeSource.from_options("shoe-1", {}, clock=None)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="baudrate must be a positive"):
        LineScannerSource.from_options("s", {"url": "loop://", "baudrate": "fast"}, clock=None)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="unknown setting parity"):
        LineScannerSource.from_options("s", {"url": "loop://", "parity": "E"}, clock=None)  # type: ignore[arg-type]


def test_missing_heartbeats_degrade_the_shoe() -> None:
    sim = ShoeSimulator(CARDS, "smart-shoe", heartbeat_seconds=0.05)

    async def body() -> None:
        source = SmartShoeSource("shoe-1", sim.device.path, heartbeat_seconds=0.05)
        await source.open()
        reader = asyncio.create_task(collect(source, sim, draws=0, want=1, timeout=0.5))
        # Heartbeats keep it healthy: several of them come (each moves the time of the last frame on), and it stays
        # connected all along.
        for _ in range(4):
            heard = source._session.last_frame_at
            await until(lambda heard=heard: source._session.last_frame_at > heard, "a heartbeat")
            assert source.health().state is SourceState.CONNECTED
        sim.heartbeat_seconds = 60  # the shoe falls silent
        await until(lambda: source.health().state is SourceState.DEGRADED, "the silent shoe to degrade")
        assert "no frame from the shoe" in source.health().detail
        await reader
        await source.close()

    run_with_sim(sim, body())


def test_unplugged_device_disconnects_and_the_supervisor_reconnects(tmp_path: Path) -> None:
    link = tmp_path / "shoe0"
    sim = ShoeSimulator(CARDS, "smart-shoe", device=PtyDevice(link=link))

    async def body() -> None:
        commands: list[c.Command] = []
        source = SmartShoeSource("shoe-1", str(link))
        supervisor = Supervisor(commands.append, [source], backoff_initial=0.05, backoff_cap=0.2)
        task = asyncio.create_task(supervisor.run())

        def state() -> SourceState | None:
            health = supervisor.states.get("shoe-1")
            return None if health is None else health.state

        def drawn() -> list[object]:
            return [cmd.read.card for cmd in commands if isinstance(cmd, c.DrawCard)]

        await until(lambda: state() is SourceState.CONNECTED, "the shoe to connect")
        sim.draw()
        await until(lambda: len(drawn()) == 1, "the first card")
        sim.unplug(0.5)
        await until(lambda: state() is SourceState.DISCONNECTED, "the unplugged shoe to disconnect")
        assert any(isinstance(cmd, c.ReportSourceFailure) for cmd in commands)
        await until(lambda: state() is SourceState.CONNECTED, "the backoff retries to find the shoe plugged back in")
        sim.draw()
        await until(lambda: len(drawn()) == 2, "the second card")
        assert drawn() == CARDS[:2]
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run_with_sim(sim, body())


def test_reading_a_closed_source_raises_disconnected() -> None:
    async def body() -> None:
        source = SmartShoeSource("shoe-1", "loop://")
        with pytest.raises(SourceDisconnected):
            async for _ in source.reports():
                pass

    asyncio.run(body())


def test_line_scanner_through_delays_duplicates_and_an_unplug(tmp_path: Path) -> None:
    """A line has no sequence number: a duplicated line reads twice (the table's second source or the pit boss must
    catch it) and a line sent while unplugged is lost; delays only slow things down."""
    faults = Faults(delay=0.02, duplicate=1.0, unplug_after=3, unplug_seconds=0.3)
    sim = ShoeSimulator(CARDS, "line", device=PtyDevice(link=tmp_path / "scanner0"), faults=faults)

    async def body() -> None:
        commands: list[c.Command] = []
        supervisor = Supervisor(commands.append, [LineScannerSource("scanner-1", str(tmp_path / "scanner0"))],
                                backoff_initial=0.05, backoff_cap=0.1)  # fmt: skip
        task = asyncio.create_task(supervisor.run())

        def state() -> SourceState | None:
            health = supervisor.states.get("scanner-1")
            return None if health is None else health.state

        def failures() -> int:
            return sum(isinstance(cmd, c.ReportSourceFailure) for cmd in commands)

        def reads() -> list[object]:
            return [cmd.read.card for cmd in commands if isinstance(cmd, c.DrawCard)]

        await until(lambda: state() is SourceState.CONNECTED, "the scanner to connect")
        for _ in range(3):
            sim.draw()
        # Unplugged after the third card, back 0.3 s later: the failure is seen, then the scanner is found again.
        await until(lambda: failures() > 0, "the unplugged scanner to fail")
        await until(lambda: state() is SourceState.CONNECTED, "the scanner to be plugged back in")
        fourth_card = CARDS[3]
        sim.draw()
        await until(lambda: reads()[-2:] == [fourth_card, fourth_card], "the fourth line and its copy")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        drawn = reads()
        first, second, third, fourth = CARDS[:4]
        # The third line (and its copy) go out just as the cable is pulled: each may reach the host or be lost, but
        # nothing arrives garbled or out of order.
        assert drawn[:4] == [first, first, second, second] and drawn[-2:] == [fourth, fourth]
        assert drawn[4:-2] in ([], [third], [third, third])
        assert any(isinstance(cmd, c.ReportSourceFailure) for cmd in commands)

    run_with_sim(sim, body())


def test_a_stopped_simulator_leaves_no_link_behind(tmp_path: Path) -> None:
    link = tmp_path / "shoe"
    sim = ShoeSimulator(CARDS, "smart-shoe", device=PtyDevice(link=link))
    sim.start()
    assert link.is_symlink() and Path(sim.device.path).exists()
    sim.stop()
    assert not link.exists() and not link.is_symlink()


def test_smart_shoe_reads_name_the_boot_they_count_in() -> None:
    """The shoe's HELLO names its boot; a card's sequence number counts within it (a power-cycled shoe's numbers
    start over in a new boot, which the table does not take for a duplicate)."""
    sim = ShoeSimulator(CARDS, "smart-shoe", boot_id=0x2A)

    async def body() -> None:
        source = SmartShoeSource("shoe-1", sim.device.path)
        await source.open()
        reports = await collect(source, sim, draws=2, want=2)
        await source.close()
        assert [(r.device_seq, r.device_session) for r in reports] == [(1, "boot-0000002a"), (2, "boot-0000002a")]
        assert reports[0].as_read().device_session == "boot-0000002a"

    run_with_sim(sim, body())
    assert ShoeSimulator(CARDS, "smart-shoe").boot_id != ShoeSimulator(CARDS, "smart-shoe").boot_id  # fresh at power-up
