"""Two sources, one truth: a table read by two devices (e.g. a smart shoe and a camera) accepts a card only when both
saw the same card.

Rules held here:
- Cards are matched in the order each source reports them: the n-th card of one source is the n-th of the other.
- A pair is matched within `window` seconds of its first read. Both agree → the card is drawn once, with the evidence
  of both. They differ, or a misread on either side, or one source alone reports a card within the window → the
  table is suspended with both reads for the pit boss.
- Everything else a source reports (cut card, faults) passes straight through.

Sans-I/O: time is passed in (seconds, monotonic), commands come out.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, replace

from studio.domain import commands as c
from studio.domain.reads import DeviceReport, ReportKind
from studio.domain.roles import Actor, Machine


def _describe(report: DeviceReport) -> str:
    if report.kind is ReportKind.CARD and report.card is not None:
        return f"{report.source} read {report.card.code}"
    return f"{report.source} could not read the card"


@dataclass
class Reconciler:
    primary: str
    secondary: str
    window: float = 2.0
    _pending: dict[str, deque[tuple[float, DeviceReport]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._pending = {self.primary: deque(), self.secondary: deque()}

    def _other(self, source: str) -> str:
        return self.secondary if source == self.primary else self.primary

    def offer(self, report: DeviceReport, now: float) -> list[c.Command]:
        """What the table should hear now that `report` came in."""
        actor = Actor(Machine.DEVICE, report.source)
        if report.kind not in (ReportKind.CARD, ReportKind.MISREAD) or report.source not in self._pending:
            return []
        waiting = self._pending[self._other(report.source)]
        if not waiting:
            self._pending[report.source].append((now, report))
            return self.expire(now)
        _, other = waiting.popleft()
        first, second = (report, other) if report.source == self.primary else (other, report)
        agreed = first.kind is ReportKind.CARD and second.kind is ReportKind.CARD and first.card == second.card
        if agreed:
            raw = " | ".join(f"{r.source}: {r.raw}" for r in (first, second) if r.raw)
            # the camera's evidence (one of the two, whichever has it) stays verifiable: its path is in `raw`
            hashed = first if first.evidence_sha256 is not None else second
            read = replace(first.as_read(), raw=raw or None, evidence_sha256=hashed.evidence_sha256,
                           evidence_boxes_sha256=hashed.evidence_boxes_sha256)  # fmt: skip
            return [c.DrawCard(actor, read), *self.expire(now)]
        detail = f"sources disagree: {_describe(first)}, {_describe(second)}"
        return [c.ReportDisagreement(actor, detail, (first.as_read(), second.as_read())), *self.expire(now)]

    def expire(self, now: float) -> list[c.Command]:
        """Cards seen by one source only for longer than the window."""
        expired: list[c.Command] = []
        for source, waiting in self._pending.items():
            while waiting and now - waiting[0][0] > self.window:
                _, report = waiting.popleft()
                detail = f"{_describe(report)}; {self._other(source)} saw no card within {self.window:g} s"
                expired.append(c.ReportDisagreement(Actor(Machine.DEVICE, source), detail, (report.as_read(),)))
        return expired
