"""Prometheus metrics of a running studio, on a registry of its own (several apps in one process never collide).

Two kinds:

- Counters moved by what each command logs (`StudioMetrics.observe`, which `Studio.handle` calls once the records are
  durable): cards by source and use, rounds completed and voided, suspensions by reason, corrections. They start at 0
  with each process, as Prometheus counters do (`rate()` and `increase()` take a restart's reset in their stride);
  they are not rebuilt from the log at start, which remains the record of everything before.
- Gauges read from the studio when Prometheus scrapes (`TableStateCollector`): each table's phase, whether it is
  suspended, whether its log cannot be written or a settlement waits for the database, each card source's state, the
  feed's subscribers, how many logged records the feed still holds back, and the age of the last record published,
  on the studio's clock.

Labels carry table ids, source ids, phases, source states and suspension reasons: never a card, a bet, a player or an
account. The process's own metrics (`process_*`, `python_*`) come from prometheus_client's standard collectors.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from datetime import datetime

from prometheus_client import CollectorRegistry, Counter, GCCollector, PlatformCollector, ProcessCollector
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric

from dealer_ui.runtime import Studio
from studio.domain.events import SuspensionReason
from studio.domain.procedure import Phase
from studio.sources import SourceState
from studio.table_service import Logged

log = logging.getLogger(__name__)

CARD_USES = {"CardDealt": "dealt", "CardBurned": "burned", "CardReadWhileSuspended": "while_suspended"}
"""What the table made of a card read, by the kind of the record that logged it. The read that suspends a table is
counted by `studio_suspensions_total`, and again here once a pit boss has corrected it and play has continued (it is
then logged as dealt or burned)."""


class StudioMetrics:
    """The studio's metrics: `registry` is what `/metrics` shows; `observe` is the studio's hook for logged records."""

    def __init__(self, studio: Studio) -> None:
        self.registry = CollectorRegistry()
        registry = self.registry
        labels = ["table"]
        self.cards = Counter(
            "studio_cards_read",
            "Card reads logged, by table, card source and what the table made of them (dealt, burned, while_suspended)",
            [*labels, "source", "use"],
            registry=registry,
        )
        self.rounds_completed = Counter("studio_rounds_completed", "Rounds completed, with a result", labels,
                                        registry=registry)  # fmt: skip
        self.rounds_voided = Counter("studio_rounds_voided", "Rounds voided by a pit boss (stakes refunded)", labels,
                                     registry=registry)  # fmt: skip
        self.suspensions = Counter("studio_suspensions", "Tables suspended for the pit boss, by reason",
                                   [*labels, "reason"], registry=registry)  # fmt: skip
        self.corrections = Counter("studio_card_corrections", "Cards corrected by a pit boss", labels,
                                   registry=registry)  # fmt: skip
        self._studio = studio
        self._last_published: dict[str, datetime] = {}
        for table_id, runtime in studio.tables.items():
            # Every table's series exist from the start (at 0), so that the first round or void is an increase.
            self.rounds_completed.labels(table_id)
            self.rounds_voided.labels(table_id)
            self.corrections.labels(table_id)
            for reason in SuspensionReason:
                self.suspensions.labels(table_id, reason.value)
            published = runtime.service.published_seq
            if published > 0:
                self._last_published[table_id] = next(studio.store.read(table_id, after=published - 1)).at
        registry.register(TableStateCollector(studio, self._last_published))
        ProcessCollector(registry=registry)
        PlatformCollector(registry=registry)
        GCCollector(registry=registry)

    def observe(self, table_id: str, logged: Sequence[Logged]) -> None:
        """Count what one command logged. Never raises: the records are durable already, whatever happens here."""
        try:
            self._count(table_id, logged)
        except Exception:
            log.exception("metrics could not count what table %s logged", table_id, extra={"table": table_id})

    def _count(self, table_id: str, logged: Sequence[Logged]) -> None:
        published = self._studio.tables[table_id].service.published_seq
        for entry in logged:
            record = entry.record
            kind = record.kind
            if kind in CARD_USES:
                self.cards.labels(table_id, str(record.data["source"]), CARD_USES[kind]).inc()
            elif kind == "RoundCompleted":
                self.rounds_completed.labels(table_id).inc()
            elif kind == "RoundVoided":
                self.rounds_voided.labels(table_id).inc()
            elif kind == "TableSuspended":
                self.suspensions.labels(table_id, str(record.data["reason"])).inc()
            elif kind == "CardCorrected":
                self.corrections.labels(table_id).inc()
            if record.seq == published:
                self._last_published[table_id] = record.at


class TableStateCollector:
    """The gauges, read from the running studio at each scrape (on the event loop, as every command is handled)."""

    def __init__(self, studio: Studio, last_published: dict[str, datetime]) -> None:
        self._studio = studio
        self._last_published = last_published  # per table: `at` of the last record the table published

    def describe(self) -> Iterator[Metric]:
        yield from _Families().all()

    def collect(self) -> Iterator[Metric]:
        families = _Families()
        now = self._studio.clock.now()
        for table_id, runtime in self._studio.tables.items():
            service = runtime.service
            for phase in Phase:
                families.phase.add_metric([table_id, phase.value], float(phase is service.state.phase))
            families.suspended.add_metric([table_id], float(service.state.suspended))
            families.log_unavailable.add_metric([table_id], float(service.log_unavailable is not None))
            families.settlement_pending.add_metric([table_id], float(runtime.settlement_pending is not None))
            states = runtime.source_states
            for source in runtime.sources:
                health = states.get(source.source_id)  # none until the supervisor has first opened the source
                for state in SourceState:
                    current = health is not None and health.state is state
                    families.source.add_metric([table_id, source.source_id, state.value], float(current))
            families.subscribers.add_metric([table_id], float(self._studio.hub.subscribers(table_id)))
            families.seq.add_metric([table_id], float(service.seq))
            families.lag.add_metric([table_id], float(service.seq - service.published_seq))
            at = self._last_published.get(table_id)
            if at is not None:
                families.age.add_metric([table_id], max(0.0, (now - at).total_seconds()))
            families.refused.add_metric([table_id], float(len(runtime.supervisor.refused)))
        yield from families.all()


class _Families:
    """The gauges' families, empty, for one scrape."""

    def __init__(self) -> None:
        table = ["table"]
        self.phase = GaugeMetricFamily(
            "studio_table_phase", "1 for the table's current phase, 0 for the others", labels=[*table, "phase"]
        )
        self.suspended = GaugeMetricFamily(
            "studio_table_suspended", "1 while the table waits for the pit boss", labels=table
        )
        self.log_unavailable = GaugeMetricFamily(
            "studio_table_log_unavailable", "1 while the table's log cannot be written (commands refused)", labels=table
        )
        self.settlement_pending = GaugeMetricFamily(
            "studio_table_settlement_pending",
            "1 while a result or void waits for the ledger to be settled",
            labels=table,
        )
        self.source = GaugeMetricFamily(
            "studio_source_state",
            "1 for the card source's state (connected, degraded, disconnected); all 0 before it was first opened",
            labels=[*table, "source", "state"],
        )
        self.subscribers = GaugeMetricFamily("studio_feed_subscribers", "Live results-feed subscribers", labels=table)
        self.seq = GaugeMetricFamily("studio_log_seq", "Seq of the table's last logged record", labels=table)
        self.lag = GaugeMetricFamily(
            "studio_feed_lag_records",
            "Records logged but not yet published (held back while the table is suspended)",
            labels=table,
        )
        self.age = GaugeMetricFamily(
            "studio_feed_last_published_age_seconds",
            "Seconds since the time of the last record the table published (absent before the first)",
            labels=table,
        )
        self.refused = CounterMetricFamily(
            "studio_device_reports_refused", "Device reports the table refused (see the supervisor's log)", labels=table
        )

    def all(self) -> list[Metric]:
        return [self.phase, self.suspended, self.log_unavailable, self.settlement_pending, self.source,
                self.subscribers, self.seq, self.lag, self.age, self.refused]  # fmt: skip
