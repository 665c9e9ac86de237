"""The supervisor: opens a table's card sources, turns what they report into table commands, watches their health and
reconnects them.

Rules held here:
- Reconnecting is done here, once, for every source: capped exponential backoff, reset after a good connection.
- A source's state (connected, degraded, disconnected) is published on every change; a disconnected source is a
  visible state, never stale values.
- A source that fails is reported to the table, which suspends if a round (or a burn) is under way.
- Every card a device reports enters the table as a command, whatever the phase: the procedure decides what it means
  (a card while betting is open suspends the table; a card while suspended is kept for the pit boss). Nothing a
  device reports is dropped silently: what the table refuses is logged here.
- A command the table could not log (the database is unreachable: `StoreError`) is offered again, every
  `log_retry` seconds, until it is logged; meanwhile this source's next reports wait (the smart shoe, not
  acknowledged, keeps its card), so cards enter the log once and in the order they were read.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from studio.backoff import Backoff
from studio.domain import commands as c
from studio.domain.errors import ProcedureError
from studio.domain.reads import DeviceReport, ReportKind
from studio.domain.reconcile import Reconciler
from studio.domain.records import StoreError
from studio.domain.roles import Actor, Machine
from studio.sources import CardSource, SourceError, SourceHealth, SourceState

log = logging.getLogger(__name__)

Handle = Callable[[c.Command], object]  # TableService.handle, or a coroutine function such as Studio.submit
Sleep = Callable[[float], Awaitable[None]]
StateListener = Callable[[str, SourceHealth], None]


def command_for(report: DeviceReport) -> c.Command | None:
    """The table command a device report stands for (None for reports the table need not hear)."""
    actor = Actor(Machine.DEVICE, report.source)
    read = report.as_read()
    match report.kind:
        case ReportKind.CARD:
            return c.DrawCard(actor, read)
        case ReportKind.MISREAD:
            return c.DrawCard(actor, read)  # a read without a card
        case ReportKind.CUT_CARD:
            return c.ReportCutCard(actor, report.source)
        case ReportKind.SHOE_REMOVED:
            return c.ReportSourceFailure(actor, report.source, "the shoe was removed")
        case ReportKind.FAULT:
            return c.ReportSourceFailure(actor, report.source, f"device fault: {report.detail}")
        case ReportKind.SHOE_INSERTED:
            return None
    return None


@dataclass
class Supervisor:
    handle: Handle
    sources: Sequence[CardSource]
    sleep: Sleep = asyncio.sleep
    on_state: StateListener | None = None
    health_interval: float = 1.0
    backoff_initial: float = 0.5
    backoff_cap: float = 30.0
    states: dict[str, SourceHealth] = field(default_factory=dict)
    reconciler: Reconciler | None = None  # two sources, one truth: cards pass only when both agree
    monotonic: Callable[[], float] = time.monotonic
    refused: list[tuple[DeviceReport, str]] = field(default_factory=list)  # what the table would not take, and why
    log_retry: float = 1.0  # seconds between offers of a command the table could not log

    async def run(self) -> None:
        """Supervise every source until cancelled; then close them all."""
        try:
            async with asyncio.TaskGroup() as group:
                for source in self.sources:
                    group.create_task(self._supervise(source))
                    group.create_task(self._watch_health(source))
                if self.reconciler is not None:
                    group.create_task(self._expire_unmatched(self.reconciler))
        finally:
            for source in self.sources:
                await source.close()

    def _set_state(self, source: CardSource, health: SourceHealth) -> None:
        previous = self.states.get(source.source_id)
        if previous is not None and (previous.state, previous.detail) == (health.state, health.detail):
            return
        self.states[source.source_id] = health
        log.info("source %s is %s %s", source.source_id, health.state.value, health.detail)
        if self.on_state is not None:
            self.on_state(source.source_id, health)

    async def _tell_table(self, command: c.Command, report: DeviceReport | None = None) -> None:
        while True:
            try:
                done = self.handle(command)
                if inspect.isawaitable(done):  # the table writes off the event loop: wait for it, not the loop
                    await done
                return
            except ProcedureError as error:
                log.warning("table refused %s: %s", type(command).__name__, error)
                if report is not None:
                    self.refused.append((report, str(error)))
                return
            except StoreError as error:
                log.error("could not log %s, offering it again in %s s: %s", type(command).__name__, self.log_retry,
                          error)  # fmt: skip
                await self.sleep(self.log_retry)

    async def _supervise(self, source: CardSource) -> None:
        backoff = Backoff(self.backoff_initial, 2.0, self.backoff_cap)
        while True:
            try:
                await source.open()
                self._set_state(source, source.health())
                backoff.reset()
                async for report in source.reports():
                    await self._take(report)
                raise SourceError("the device closed the connection")
            except SourceError as error:
                await source.close()
                self._set_state(source, SourceHealth(SourceState.DISCONNECTED, str(error)))
                await self._tell_table(
                    c.ReportSourceFailure(Actor(Machine.DEVICE, source.source_id), source.source_id, str(error))
                )
                await self.sleep(backoff.next_delay())

    async def _take(self, report: DeviceReport) -> None:
        if self.reconciler is not None and report.kind in (ReportKind.CARD, ReportKind.MISREAD):
            for command in self.reconciler.offer(report, self.monotonic()):
                await self._tell_table(command, report)
            return
        single = command_for(report)
        if single is not None:
            await self._tell_table(single, report)

    async def _expire_unmatched(self, reconciler: Reconciler) -> None:
        while True:
            await self.sleep(reconciler.window / 4)
            for command in reconciler.expire(self.monotonic()):
                await self._tell_table(command)

    async def _watch_health(self, source: CardSource) -> None:
        while True:
            await self.sleep(self.health_interval)
            current = self.states.get(source.source_id)
            if current is not None and current.state is not SourceState.DISCONNECTED:
                self._set_state(source, source.health())
