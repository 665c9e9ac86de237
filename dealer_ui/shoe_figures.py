"""Live shoe figures: the exact value of every bet for the cards left in each table's shoe, after every card, and an
alert when a bet turns in the players' favour beyond the table's `edge_alert_threshold`.

Rules held here:
- The cards out are the table's own count (`TableState.seen`): every card burned or dealt in this shoe, a pit boss's
  corrections included, folded with the procedure's own `evolve`. A card read while the table was suspended and set
  aside is not in it (the table does not count it either). The figures are exactly `studio odds --removed` for those
  cards, the table's decks and pay table.
- Off the writer path: the studio's observers hand this module what each command logged; it only queues it. One
  worker thread folds the records into its own copy of each table's state and has the analysis computed once per new
  composition (cached), in a process of its own (`analyse_apart`); a reader takes what is there, and waits a moment
  for a seq it has not reached yet.
  At start the worker rebuilds the current shoe from the log, so a restart keeps the history of the shoe.
- An alert is raised when a bet's edge for the players goes beyond the threshold (not again while it stays there),
  logged (WARNING, logger `dealer_ui.shoe_figures`, with `table`, `seq`, `game_id` and `actor` fields: the card
  that turned it and who dealt it) and kept with the shoe's figures for the pit boss.
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import os
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from datetime import datetime
from fractions import Fraction
from typing import Any

from studio.domain.analysis import ShoeAnalysis, analyse, as_json
from studio.domain.cards import ALL_CARDS, Card
from studio.domain.events import Event, decode
from studio.domain.paytable import PayTable
from studio.domain.procedure import TableState, evolve
from studio.domain.records import Record, StoreError
from studio.ports import EventStore
from studio.settings import TableConfig
from studio.table_service import Logged

log = logging.getLogger(__name__)

ACTOR = "system:shoe-figures"  # who raises an alert: the studio's figures, not a person
WAIT = 5.0  # seconds a reader waits for the worker to reach the table's seq


@dataclass(frozen=True, slots=True)
class Point:
    """The shoe after one more card out (or a correction): its composition and every bet's exact value."""

    seq: int  # the record after which the shoe was so
    at: datetime
    shoe: int
    seen: tuple[int, ...]  # copies out of each card, in ALL_CARDS order
    analysis: ShoeAnalysis

    @property
    def cards_out(self) -> int:
        return sum(self.seen)


@dataclass
class _Table:
    config: TableConfig
    state: TableState
    seq: int = 0  # the last record folded
    points: list[Point] = field(default_factory=list)  # the current shoe's, oldest first
    alerts: list[dict[str, Any]] = field(default_factory=list)  # the current shoe's
    alerting: set[str] = field(default_factory=set)  # bets beyond the threshold now
    ready: bool = False  # the log has been read up to where the live records take over


def removed_cards(seen: Sequence[int]) -> list[Card]:
    return [card for card, copies in zip(ALL_CARDS, seen, strict=True) for _ in range(copies)]


def players_edge_percent(analysis: ShoeAnalysis) -> dict[str, Fraction]:
    """Each bet's expected gain for the player, in percent of the stake (the house edge with its sign turned)."""
    return {bet.value: value.ev * 100 for bet, value in analysis.bets.items()}


class ShoeFigures:
    def __init__(
        self,
        store: EventStore,
        tables: Mapping[str, TableConfig],
        analyse_shoe: Callable[[Sequence[int], TableConfig], ShoeAnalysis] | None = None,
    ) -> None:
        self._store = store
        self._analyse = analyse_shoe or analyse_apart
        self._tables = {table_id: _Table(config, TableState(table_id, config.procedure))
                        for table_id, config in tables.items()}  # fmt: skip
        self._cache: dict[tuple[str, tuple[int, ...]], ShoeAnalysis] = {}  # per table's rules and composition
        self._queue: queue.Queue[tuple[str, list[Record], list[Event]] | None] = queue.Queue()
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        self.computed = 0  # analyses computed (the rest came from the cache)
        self.compute_seconds = 0.0  # time spent computing them

    # Lifecycle: a worker thread, started with the studio, stopped (and joined) with it.

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="shoe-figures", daemon=True)
            self._thread.start()
            for table_id in self._tables:
                self._queue.put((table_id, [], []))  # read the log first

    def stop(self) -> None:
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None

    def observe(self, table_id: str, logged: Sequence[Logged]) -> None:
        """The studio's observer (on the event loop): queue what was logged, nothing more."""
        if logged and table_id in self._tables:
            self._queue.put((table_id, [entry.record for entry in logged], [entry.event for entry in logged]))

    # Reading.

    def wait_for(self, table_id: str, seq: int, timeout: float = WAIT) -> bool:
        """Wait (off the event loop) until the worker has folded `seq`; whether it has."""
        table = self._tables[table_id]
        deadline = time.monotonic() + timeout
        with self._changed:
            while not (table.ready and table.seq >= seq):
                left = deadline - time.monotonic()
                if left <= 0 or self._thread is None:
                    return False
                self._changed.wait(left)
        return True

    def figures(self, table_id: str) -> dict[str, Any] | None:
        """The current shoe's figures: the last point in full (as `studio odds --removed --json` prints it, plus the
        cards out), each point's house edges for the plot, the alerts; None before the first shoe."""
        table = self._tables[table_id]
        with self._changed:
            points, alerts, alerting, seq = list(table.points), list(table.alerts), sorted(table.alerting), table.seq
        if not points:
            return None
        last = points[-1]
        config = table.config
        return {
            "table": table_id,
            "shoe": last.shoe,
            "seq": last.seq,
            "folded_seq": seq,
            "at": last.at.isoformat(),
            "cards_out": last.cards_out,
            "removed": [card.code for card in removed_cards(last.seen)],
            **as_json(config.procedure.decks, last.analysis, config.pay_table.name),
            "edge_alert_threshold": _decimal_text(config.edge_alert_threshold),
            "alerting": alerting,
            "alerts": alerts,
            "history": [
                {
                    "seq": point.seq,
                    "cards_out": point.cards_out,
                    "house_edge": {bet.value: float(value.house_edge) for bet, value in point.analysis.bets.items()},
                }
                for point in points
            ],
        }

    # The worker.

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            table_id, records, events = item
            try:
                self._fold(table_id, records, events)
            except StoreError as error:  # the log does not answer: read it again with the next records
                log.warning("table %s: the shoe figures wait for the log: %s", table_id, error)
            except Exception:  # never let one bad record stop the figures of every table
                log.exception("table %s: the shoe figures could not follow the log", table_id)

    def _fold(self, table_id: str, records: list[Record], events: list[Event]) -> None:
        table = self._tables[table_id]
        if not table.ready or (records and records[0].seq > table.seq + 1):
            # At start, or records missed (a gap): read them from the log. Alerts found there are kept, not logged
            # again: they were logged when their card was (or the studio was not running).
            missed = list(self._store.read(table_id, after=table.seq))
            self._apply(table, missed, [decode(r.kind, r.data, r.raw) for r in missed], log_alerts=table.ready)
            with self._changed:
                table.ready = True
                self._changed.notify_all()
        fresh = [(record, event) for record, event in zip(records, events, strict=True) if record.seq > table.seq]
        self._apply(table, [record for record, _ in fresh], [event for _, event in fresh], log_alerts=True)

    def _apply(self, table: _Table, records: list[Record], events: list[Event], *, log_alerts: bool) -> None:
        pending: list[tuple[Record, TableState]] = []  # the states after which the shoe changed
        state = table.state
        for record, event in zip(records, events, strict=True):
            before = state
            state = evolve(state, event)
            if record.kind == "CutCardPlaced":  # a new shoe: the count of cards out starts again, from the full shoe
                pending = [(record, state)]
                with self._changed:
                    table.points, table.alerts, table.alerting = [], [], set()
            elif state.seen != before.seen:  # a card out, or a correction
                pending.append((record, state))
        for record, after in pending:
            point = Point(record.seq, record.at, after.shoe, after.seen, self._analysis(table, after.seen))
            with self._changed:
                table.points.append(point)
            self._check(table, point, record, after, log_alerts)
        with self._changed:
            table.state = state
            if records:
                table.seq = records[-1].seq
            self._changed.notify_all()

    def _analysis(self, table: _Table, seen: tuple[int, ...]) -> ShoeAnalysis:
        key = (table.state.table_id, seen)
        cached = self._cache.get(key)
        if cached is None:
            started = time.perf_counter()
            cached = self._analyse(seen, table.config)
            self.compute_seconds += time.perf_counter() - started
            self.computed += 1
            if len(self._cache) > 4096:  # a few shoes' worth; older compositions are not asked for again
                self._cache.clear()
            self._cache[key] = cached
        return cached

    def _check(self, table: _Table, point: Point, record: Record, state: TableState, log_alerts: bool) -> None:
        threshold = table.config.edge_alert_threshold
        edges = players_edge_percent(point.analysis)
        beyond = {bet for bet, edge in edges.items() if edge > threshold}
        for bet in sorted(beyond - table.alerting):
            game_id = state.round.game_id if state.round is not None else None
            alert = {
                "bet": bet, "players_edge_percent": float(edges[bet]), "threshold_percent": float(threshold),
                "seq": point.seq, "at": point.at.isoformat(), "shoe": point.shoe, "cards_out": point.cards_out,
                "cards_remaining": point.analysis.cards_remaining, "game_id": game_id, "card_by": record.actor,
                "dealer": state.dealer,
            }  # fmt: skip
            with self._changed:
                table.alerts.append(alert)
            if log_alerts:
                log.warning(
                    "table %s: %s favours the players by %.3f%% (threshold %s%%) with %d cards left in shoe %d, after "
                    "the record at seq %d (%s by %s, dealer %s)", state.table_id, bet.replace("_", " "), edges[bet],
                    _decimal_text(threshold), point.analysis.cards_remaining, point.shoe, point.seq, record.kind,
                    record.actor, state.dealer or "none",
                    extra={"table": state.table_id, "seq": point.seq, "game_id": game_id, "actor": ACTOR},
                )  # fmt: skip
        with self._changed:
            table.alerting = beyond


def analyse_here(seen: Sequence[int], config: TableConfig) -> ShoeAnalysis:
    """The exact analysis of the shoe left once `seen` (copies out of each card) are out, on this thread."""
    decks = config.procedure.decks
    return analyse(
        Counter({card: decks - copies for card, copies in zip(ALL_CARDS, seen, strict=True)}), config.pay_table
    )


# The analyses run in a process of their own, shared by every table of the process: a few milliseconds of pure Python
# per card, which on a thread would hold the interpreter's lock against the tables' writers (measured in
# bench/shoe_figures_bench.py). Started with the first figures (spawned: never a fork of a threaded server), ended
# with the studio's process however that ends (`_end_with_parent`).
class _AnalysisProcess:
    """The one process of the analyses, made at first use; if it cannot be had, the analyses run here (said once)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None
        self._failed = False

    def analyse(self, shoe: Counter[Card], pay_table: PayTable) -> ShoeAnalysis:
        with self._lock:
            if self._pool is None and not self._failed:
                self._pool = ProcessPoolExecutor(
                    1, mp_context=multiprocessing.get_context("spawn"), initializer=_end_with_parent
                )
            pool = self._pool
        if pool is not None:
            try:
                return pool.submit(analyse, shoe, pay_table).result()
            except (BrokenProcessPool, OSError, RuntimeError) as error:
                log.warning("the shoe figures are computed in the studio's own process from now on: %s", error)
                with self._lock:
                    self._pool, self._failed = None, True
        return analyse(shoe, pay_table)


_ANALYSIS_PROCESS = _AnalysisProcess()


def _end_with_parent() -> None:
    """In the analysis process, first: end when the studio's process has ended. A studio stopped cleanly ends it
    itself, but one killed (SIGKILL, a crash) cannot, and the analysis process would wait on its queue for ever, one
    more idle process per restart. The parent's sentinel (a pipe it holds open) reads as closed once it is gone."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(0)

    threading.Thread(target=watch, name="end-with-the-studio", daemon=True).start()


def analyse_apart(seen: Sequence[int], config: TableConfig) -> ShoeAnalysis:
    """`analyse_here`, computed in the analysis process."""
    decks = config.procedure.decks
    shoe = Counter({card: decks - copies for card, copies in zip(ALL_CARDS, seen, strict=True)})
    return _ANALYSIS_PROCESS.analyse(shoe, config.pay_table)


def _decimal_text(value: Fraction) -> str:
    """A threshold as it was written ("0.5", "-1"), from the exact fraction a decimal gives."""
    text = f"{float(value):.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text
