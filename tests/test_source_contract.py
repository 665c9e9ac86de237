"""One contract for every card source (DESIGN habit 5): the in-memory twin, the smart shoe and the line scanner over a
real kernel pseudo-terminal, and the camera reading a folder of frames. Each kind is given by a `Rig` that makes the
source and makes its device report cards; the tests are the same for all.

The contract (studio.sources): `close` is safe twice and before `open`; `async with` opens and closes; reading a
closed source raises `SourceDisconnected`; health reads disconnected once closed; reports keep their order.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import cv2
import numpy as np
import pytest

from drivers.camera.enroll import enroll_folder
from drivers.camera.source import CameraSource
from drivers.line_scanner.source import LineScannerSource
from drivers.memory_source import MemorySource
from drivers.simulator.shoe_sim import ShoeSimulator
from drivers.smart_shoe.source import SmartShoeSource
from studio.domain.cards import Card
from studio.domain.reads import DeviceReport, ReportKind
from studio.simulation import seeded_shoe
from studio.sources import CardSource, SourceDisconnected, SourceState
from tests.camera.render import degrade, felt, photo, table
from tests.waiting import until

CARDS = seeded_shoe(1, random.Random(8))[:5]
AT = datetime(2026, 12, 1, tzinfo=UTC)


@dataclass
class Rig:
    """A source under test and a way to make its device report `cards` (in that order)."""

    source: CardSource
    report: Callable[[list[Card]], None]


def _memory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Rig]:
    source = MemorySource("memory-1")

    def report(cards: list[Card]) -> None:
        for seq, card in enumerate(cards, start=1):
            source.push(DeviceReport("memory-1", ReportKind.CARD, AT, card, seq))

    yield Rig(source, report)


def _serial(protocol: str, make: Callable[[str], CardSource]) -> Callable[[pytest.FixtureRequest, Path], Iterator[Rig]]:
    def rig(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Rig]:
        sim = ShoeSimulator(CARDS, protocol)
        sim.start()

        def report(cards: list[Card]) -> None:
            assert cards == CARDS[sim.position : sim.position + len(cards)]
            for _ in cards:
                sim.draw()

        try:
            yield Rig(make(sim.device.path), report)
        finally:
            sim.stop()

    return rig


@pytest.fixture(scope="module")
def camera_frames(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A folder of frames (the felt, then each card lying still for three frames and taken away) and the deck,
    enrolled from one synthetic photo per card."""
    folder = tmp_path_factory.mktemp("camera")
    photos, frames = folder / "deck", folder / "frames"
    photos.mkdir()
    frames.mkdir()
    for index, card in enumerate(CARDS):
        cv2.imwrite(str(photos / f"{card.code}.png"), photo(card.code, seed=index))
    templates = enroll_folder(photos).templates("contract deck").save(folder / "deck.npz")
    rng = np.random.default_rng(5)
    empty = felt((1280, 720), rng)
    shots = [empty, empty]
    for index, card in enumerate(CARDS):
        scene, _ = table([card.code], seed=index)
        shots += [degrade(scene, rng, noise=2.0) for _ in range(3)] + [empty, empty]
    for number, shot in enumerate(shots):
        cv2.imwrite(str(frames / f"frame{number:03d}.png"), shot)
    return frames, templates


def _camera(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Rig]:
    frames, templates = request.getfixturevalue("camera_frames")
    source = CameraSource("camera-1", frames, templates=templates, stable_frames=3, evidence_dir=tmp_path / "e")
    yield Rig(source, lambda cards: None)  # the frames are on the folder already: the camera reads them in order


RIGS: dict[str, Callable[[pytest.FixtureRequest, Path], Iterator[Rig]]] = {
    "memory": _memory,
    "camera": _camera,
    "smart_shoe": _serial("smart-shoe", lambda path: SmartShoeSource("shoe-1", path)),
    "line_scanner": _serial("line", lambda path: LineScannerSource("scanner-1", path)),
}


@pytest.fixture(params=sorted(RIGS))
def rig(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Rig]:
    yield from RIGS[request.param](request, tmp_path)


async def _cards(reports: AsyncIterator[DeviceReport], count: int) -> list[Card | None]:
    seen: list[Card | None] = []
    async with asyncio.timeout(10):
        async for report in reports:
            if report.kind is ReportKind.CARD:
                seen.append(report.card)
                if len(seen) == count:
                    break
    return seen


def test_close_is_safe_before_open_and_twice(rig: Rig) -> None:
    async def body() -> None:
        await rig.source.close()
        assert rig.source.health().state is SourceState.DISCONNECTED
        await rig.source.open()
        await rig.source.close()
        await rig.source.close()
        assert rig.source.health().state is SourceState.DISCONNECTED

    asyncio.run(body())


def test_async_with_opens_and_closes(rig: Rig) -> None:
    async def body() -> None:
        async with rig.source as opened:
            assert opened is rig.source
            assert rig.source.health().state is not SourceState.DISCONNECTED
        assert rig.source.health().state is SourceState.DISCONNECTED
        with contextlib.suppress(RuntimeError):
            async with rig.source:
                raise RuntimeError("the body fails")
        assert rig.source.health().state is SourceState.DISCONNECTED  # closed all the same

    asyncio.run(body())


def test_reading_after_close_raises_disconnected(rig: Rig) -> None:
    async def body() -> None:
        await rig.source.open()
        await rig.source.close()
        with pytest.raises(SourceDisconnected):
            async for _ in rig.source.reports():
                pass
        assert rig.source.health().state is SourceState.DISCONNECTED

    asyncio.run(body())


def test_a_reader_waiting_when_the_source_closes_gets_disconnected(rig: Rig) -> None:
    async def body() -> None:
        await rig.source.open()
        reading = asyncio.create_task(_cards(rig.source.reports(), 1))
        await asyncio.sleep(0)  # the reader waits for a report
        await rig.source.close()
        with pytest.raises(SourceDisconnected):
            await reading

    asyncio.run(body())


def test_reports_keep_their_order(rig: Rig) -> None:
    async def body() -> None:
        async with rig.source:
            reading = asyncio.create_task(_cards(rig.source.reports(), len(CARDS)))
            await until(lambda: rig.source.health().state is SourceState.CONNECTED, "the source to connect")
            rig.report(CARDS)
            assert await reading == CARDS

    asyncio.run(body())
