"""The running studio: every table's service, its card sources and supervisor, the results-feed hub, the accounts.

This is the one place where concrete drivers and stores meet the core (DESIGN.md §3). A table with no `[[sources]]`
gets the built-in shoe simulator on a pseudo-terminal, read through the real smart-shoe driver, so the embedded
default exercises the same path as a studio with hardware.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import tempfile
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from dealer_ui.checkpoints import Checkpointer
from dealer_ui.feed_log import LogFeed
from dealer_ui.hub import FeedHub
from dealer_ui.redis_feed import RedisForwarder
from drivers.registry import create_source
from drivers.simulator.pty_device import PtyDevice
from drivers.simulator.shoe_sim import ShoeSimulator
from drivers.smart_shoe.source import SmartShoeSource
from studio.access import AccessPolicy
from studio.bet_batches import BetBatches
from studio.betting import BettingService
from studio.chat_store import ChatStore
from studio.clock import SystemClock
from studio.domain import commands as c
from studio.domain.console import ConsoleMemory, remember
from studio.domain.errors import ConfigError, ProcedureError
from studio.domain.feed import FEED_KINDS, TABLE_NOTICES, chat_notice, feed_message
from studio.domain.log_views import RoundIndex
from studio.domain.procedure import Phase, TableState
from studio.domain.reconcile import Reconciler
from studio.domain.records import Record, StoreError
from studio.domain.roads import compute_roads
from studio.domain.roles import Actor, Role
from studio.ports import Clock
from studio.settings import TableConfig, load_table_config, sqlite_url
from studio.signing import PRIVATE_NAME, CheckpointStore, Signer, generate_keys, load_private_key
from studio.simulated_shoes import SimulatedShoeStore
from studio.simulation import seeded_shoe
from studio.sources import CardSource, SourceHealth
from studio.store_sql import SqlEventStore
from studio.supervisor import Supervisor
from studio.table_service import Logged, LogUnavailable, TableService
from studio.users import UserStore
from studio.wallets import WalletStore

log = logging.getLogger(__name__)

RECENT_RESULTS = 72  # a bead plate's worth
LOG_RETRY = 1.0  # seconds between two asks of a log (or ledger) that did not answer
AUTO_DEAL_PATIENCE = 5.0  # seconds the simulated dealer waits for a drawn card to be logged before drawing again
APPROVAL_TICK = 0.2  # seconds between two looks at a player bank's approval deadline (by the studio's clock)

DEMO_ACCOUNTS = [("dealer", Role.DEALER, "dealer"), ("pitboss", Role.PIT_BOSS, "pitboss"),
                 ("surveillance", Role.SURVEILLANCE, "surveillance"), ("admin", Role.ADMIN, "admin")]  # fmt: skip
DEMO_DEALER_NAME = "Dana"  # the demo dealer's display name, as players are shown it


@dataclass
class StudioSettings:
    database: str = "data/studio.db"  # a SQLite path or a database URL
    table_files: Sequence[Path] = ()  # none: one table "T1" on the defaults
    demo: bool = False  # demo accounts (shown on screen)
    auto_deal_seconds: float | None = None  # the simulated shoe draws by itself when a card is due
    simulator_seed: int | None = None
    redis_url: str | None = None  # also publish the results feed to Redis Streams, for feed servers (`studio feed`)
    signing_key: Path | None = None  # the Ed25519 key that signs checkpoints (`studio keys generate`)
    checkpoint_minutes: float = 10.0  # a table whose log grows is checkpointed at least this often (and at shoe ends)
    checkpoint_file: Path | None = None  # default: checkpoints.jsonl beside the SQLite file (or in data/)
    access: AccessPolicy = field(default_factory=AccessPolicy)  # sessions by role, lockout, HTTPS (studio.access)


class StudioPublisher:
    """What the tables publish (`TableService`'s publisher), handed on from a table's writer thread: the table-state
    notices posted to the table's chat (there, since that writes to the database), then the records to the feed hub
    on the event loop's thread, in order (the hub's queues belong to the loop). Within `settling_first`, what a
    command publishes waits until its settlement is written: a game server told a result can read its settlement."""

    def __init__(self, hub: FeedHub, chat: ChatStore) -> None:
        self.hub = hub
        self.chat = chat
        self.loop: asyncio.AbstractEventLoop | None = None  # the studio's event loop, once started
        self._waiting = threading.local()  # per writer thread: records held until the command's settlement

    @contextlib.contextmanager
    def settling_first(self) -> Iterator[None]:
        """Hold what is published in this block (on this thread) and hand it on at its end, even if it raised."""
        held: list[Record] = []
        self._waiting.records = held
        try:
            yield
        finally:
            self._waiting.records = None
            if held:
                self._hand_on(held)

    def publish(self, records: Sequence[Record]) -> None:
        held = getattr(self._waiting, "records", None)
        if held is not None:
            held.extend(records)
        else:
            self._hand_on(records)

    def _hand_on(self, records: Sequence[Record]) -> None:
        self._post_notices(records)
        loop = self.loop
        if loop is None or _running_loop() is loop:
            self.hub.publish(records)
        else:
            loop.call_soon_threadsafe(self.hub.publish, list(records))

    def _post_notices(self, records: Sequence[Record]) -> None:
        for record in records:
            if FEED_KINDS.get(record.kind) not in TABLE_NOTICES:
                continue
            message = feed_message(record)
            text = None if message is None else chat_notice(message)
            if text is None:
                continue
            try:
                self.chat.notice(record.stream, text)
            except StoreError as error:  # the chat is a courtesy: the log and the feed already hold the fact
                log.warning("table %s: the chat notice for seq %d was not posted: %s", record.stream, record.seq, error)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


@dataclass(eq=False)
class TableRuntime:
    config: TableConfig
    service: TableService
    sources: list[CardSource]
    supervisor: Supervisor
    betting: BettingService
    simulator: ShoeSimulator | None = None
    recent: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=RECENT_RESULTS))
    last_void: dict[str, Any] | None = None  # the last round voided, with its reason and who voided it
    suspension_seq: int | None = None  # the seq of the last TableSuspended record (its read's evidence is served)
    suspended_at: datetime | None = None  # when that record was logged: how long the table has waited
    settlement_pending: str | None = None  # why a logged result or void could not be settled yet (database down)
    last_record: Record | None = None  # the table's head, as this process last saw it (for the checkpoints)
    dealer_name: str | None = None  # the dealer's display name, as players are shown it (None: none set)
    console: ConsoleMemory = field(default_factory=ConsoleMemory)  # the last burn and suspension, for the console
    # The table's writer: its commands' writes, one after the other, off the event loop (`Studio.submit`).
    writer: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="table"))
    version: int = 0
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    bets: BetBatches = field(init=False)  # the table's bet requests, placed in groups on its writer

    def __post_init__(self) -> None:
        self.bets = BetBatches(self.betting, lambda: self.service.state, self.writer)

    @property
    def table_id(self) -> str:
        return self.config.table_id

    def follow(self, record: Record) -> None:
        """Keep the recent results, the last void and the console's memory in step with the log."""
        self.last_record = record
        self.console = remember(self.console, record)
        if record.kind == "RoundCompleted":
            self.recent.append(dict(record.data))
        elif record.kind == "RoundVoided":
            self.last_void = {**record.data, "by": record.actor, "at": record.at.isoformat()}
        elif record.kind == "TableSuspended":
            self.suspension_seq, self.suspended_at = record.seq, record.at
        elif record.kind == "DealerChanged":
            self.dealer_name = record.data.get("display_name")

    @property
    def source_states(self) -> dict[str, SourceHealth]:
        return dict(self.supervisor.states)


class Studio:
    def __init__(self, settings: StudioSettings, clock: Clock | None = None) -> None:
        self.settings = settings
        self.clock = clock or SystemClock()
        url = sqlite_url(settings.database)
        self.store = SqlEventStore(url)
        self.users = UserStore(url, self.clock, settings.access, self.store)  # its access log: in `store`
        self.wallets = WalletStore(url, self.clock)
        self.chat = ChatStore(url, self.clock)
        self.shoes = SimulatedShoeStore(url)  # the simulated shoes' order, for a restart to deal on from
        self.checkpointer = self._checkpointer(settings, url)
        self.log_feed = LogFeed(self.store)
        self.hub = FeedHub(self.log_feed.with_roads)
        self.publisher = StudioPublisher(self.hub, self.chat)
        self.tables: dict[str, TableRuntime] = {}
        self.settled = asyncio.Condition()  # game servers' outcome streams wait on this
        self._tasks: list[asyncio.Task[None]] = []
        self._log_watch: asyncio.Task[None] | None = None
        self.observers: list[Callable[[str, list[Logged]], None]] = []  # told what each command logged: metrics, logs
        if self.checkpointer is not None:
            self.observers.append(self.checkpointer.observe)
        self._rng = random.Random(settings.simulator_seed)
        configs = [load_table_config(path) for path in settings.table_files] or [load_table_config()]
        for config in configs:
            if config.table_id in self.tables:
                raise ConfigError(f"{config.path}: table id {config.table_id!r} is used twice")
            self.tables[config.table_id] = self._table(config)
        self.forwarder: RedisForwarder | None = None  # the results feed to Redis, for feed servers
        if settings.redis_url:
            self.forwarder = RedisForwarder(settings.redis_url, self.log_feed, self.published_seq, self.tables)
            self.hub.forward = self.forwarder.forward
        if settings.demo:
            existing = {user.name for user in self.users.users()}
            for name, role, password in DEMO_ACCOUNTS:
                if name not in existing:
                    self.users.add_user(
                        name, role, password, DEMO_DEALER_NAME if role is Role.DEALER else None, by="system:demo"
                    )

    def _checkpointer(self, settings: StudioSettings, url: str) -> Checkpointer | None:
        """Signed checkpoints with the configured key; in demo mode without one, a key generated (once) beside the
        database, and said so; otherwise none, and said so."""
        folder = Path(settings.database).parent if "://" not in settings.database else Path("data")
        key_file = settings.signing_key
        if key_file is None and settings.demo:
            key_file = folder / PRIVATE_NAME
            if not key_file.exists():
                generate_keys(folder)
            log.warning("demo mode: checkpoints are signed with a key generated at %s (`studio keys generate` "
                        "makes one for a real studio)", key_file)  # fmt: skip
        if key_file is None:
            log.warning("no signing key (--signing-key): the tables' heads are not checkpointed")
            return None
        store = CheckpointStore(url, settings.checkpoint_file or folder / "checkpoints.jsonl")
        return Checkpointer(Signer(load_private_key(key_file)), store, self.clock, settings.checkpoint_minutes)

    def _table(self, config: TableConfig) -> TableRuntime:
        service = TableService(config.table_id, self.store, self.clock, config.procedure, self.publisher)
        simulator = None
        try:
            sources = [create_source(s.source_id, s.driver, s.options, self.clock) for s in config.sources]
        except ConfigError as error:
            raise ConfigError(f"{config.path}: {error}") from None
        if not sources:
            link = Path(tempfile.gettempdir()) / f"studio-{os.getpid()}-{config.table_id}-shoe"
            simulator = self._simulated_shoe(config, service.state, link)
            sources = [SmartShoeSource(f"{config.table_id}-sim-shoe", str(link), clock=self.clock)]
        reconciler = None
        if len(sources) == 2:
            reconciler = Reconciler(sources[0].source_id, sources[1].source_id, config.reconcile_window)
        supervisor = Supervisor(self._handler(config.table_id), sources, reconciler=reconciler)
        betting = BettingService(config.table_id, self.wallets, config.limits, config.pay_table, self.clock,
                                 config.player_banker, config.bank_min_points, config.approval_seconds)  # fmt: skip
        runtime = TableRuntime(config, service, sources, supervisor, betting, simulator)
        for record in self.store.read(config.table_id):
            runtime.follow(record)
        return runtime

    def _simulated_shoe(self, config: TableConfig, state: TableState, link: Path) -> ShoeSimulator:
        """The built-in shoe: after a restart in the middle of a shoe, the same shoe, where the log says it was (the
        card it gives next is the one the interrupted shoe would have given); else a fresh shuffle."""
        saved = self.shoes.load(config.table_id)
        if saved is not None and state.cut_position is not None and saved[0] == state.shoe:
            return ShoeSimulator(saved[1], "smart-shoe", device=PtyDevice(link=link), cut_card_at=state.cut_position,
                                 position=state.cards_drawn)  # fmt: skip
        shoe = seeded_shoe(config.procedure.decks, self._rng)
        return ShoeSimulator(shoe, "smart-shoe", device=PtyDevice(link=link))

    def _handler(self, table_id: str) -> Callable[[c.Command], Awaitable[list[Logged]]]:
        async def handle(command: c.Command) -> list[Logged]:
            return await self.submit(table_id, command)

        return handle

    # Lifecycle.

    async def start(self) -> None:
        self.publisher.loop = asyncio.get_running_loop()
        if self.forwarder is not None:
            self._tasks.append(asyncio.create_task(self.forwarder.run(), name="redis-forwarder"))
        if self.checkpointer is not None:
            self._tasks.append(asyncio.create_task(self.checkpointer.run(self._heads), name="checkpoints"))
        for runtime in self.tables.values():
            runtime.betting.settle_unsettled(self.store.read(runtime.table_id))
            if runtime.simulator is not None:
                runtime.simulator.start()
            self._tasks.append(asyncio.create_task(runtime.supervisor.run(), name=f"supervisor:{runtime.table_id}"))
            if runtime.simulator is not None and self.settings.auto_deal_seconds:
                self._tasks.append(asyncio.create_task(self._auto_deal(runtime, self.settings.auto_deal_seconds)))
            if runtime.config.player_banker:
                self._tasks.append(asyncio.create_task(self._approval_timer(runtime), name=f"bank:{runtime.table_id}"))

    async def stop(self) -> None:
        if self._log_watch is not None:
            self._tasks.append(self._log_watch)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for runtime in self.tables.values():
            if runtime.simulator is not None:
                runtime.simulator.stop()
            runtime.writer.shutdown(wait=True)
        if self.forwarder is not None:
            await self.forwarder.close()
        self.store.close()
        self.users.close()
        self.wallets.close()
        self.chat.close()
        self.shoes.close()
        if self.checkpointer is not None:
            self.checkpointer.store.close()

    def _heads(self) -> list[Record]:
        """Each table's last logged record (for the checkpoints)."""
        return [runtime.last_record for runtime in self.tables.values() if runtime.last_record is not None]

    # Commands.

    async def submit(self, table_id: str, command: c.Command) -> list[Logged]:
        """Apply a command to a table as `handle` does, with its writes (the log, then the ledger's settlement) on the
        table's own writer thread, one command after the other: a slow or locked database holds up that table's
        commands only, never the event loop, where every console and feed subscriber is served."""
        runtime = self.tables[table_id]
        loop = asyncio.get_running_loop()
        try:
            logged, settled = await loop.run_in_executor(runtime.writer, self._write, runtime, command)
        except LogUnavailable:
            self._log_trouble(runtime)
            raise
        self._published(runtime, logged, settled)
        return logged

    def handle(self, table_id: str, command: c.Command) -> list[Logged]:
        """Apply a command to a table (raising `ProcedureError` if the procedure refuses it, `LogUnavailable` if the
        log cannot be written) and wake its consoles, on the caller's thread (`submit` writes off the event loop)."""
        runtime = self.tables[table_id]
        try:
            logged, settled = self._write(runtime, command)
        except LogUnavailable:
            self._log_trouble(runtime)
            raise
        self._published(runtime, logged, settled)
        return logged

    def _write(self, runtime: TableRuntime, command: c.Command) -> tuple[list[Logged], list[bool]]:
        """The command's writes: the log, then the settlement of a round it closed (safe on any one thread)."""
        if isinstance(command, c.CloseBetting):
            runtime.bets.flush()  # the bets that arrived before "no more bets" are placed (or refused) before it
        with self.publisher.settling_first():  # the feed tells a result once its bets are settled
            logged = runtime.service.handle(self._with_bettors(runtime, command))
            return logged, self._settle(runtime, logged)

    def _with_bettors(self, runtime: TableRuntime, command: c.Command) -> c.Command:
        """At a table with seats, "no more bets" names who bet in the round, as the ledger says (the seated players
        who neither bet nor passed sit the round out). Read here, on the table's writer, just before the close is
        logged; once the timer has run out no bet is taken, so only a close called early could miss a bet placed in
        that instant (the bet stands and is settled; only the sit-out record would be wrong)."""
        state = runtime.service.state
        if not isinstance(command, c.CloseBetting) or command.bettors is not None or not state.config.seats:
            return command
        if state.round is None:
            return command  # refused by the procedure, with its reason
        bets = self.wallets.bets(state.round.game_id, status="open")
        return replace(command, bettors=frozenset(bet.player_id for bet in bets))

    def _published(self, runtime: TableRuntime, logged: list[Logged], settled: list[bool]) -> None:
        """On the event loop, once logged: consoles, observers, the simulated shoe and the settlements' readers."""
        table_id = runtime.table_id
        if runtime.settlement_pending is not None:
            self._log_trouble(runtime)
        for entry in logged:
            runtime.follow(entry.record)
        for observe in self.observers:
            observe(table_id, logged)
        if any(settled):
            asyncio.get_running_loop().create_task(self._notify_settled())
        if runtime.simulator is not None:
            self._follow_with_simulator(runtime, logged)
        runtime.version += 1
        asyncio.get_running_loop().create_task(self._notify(runtime))

    def _settle(self, runtime: TableRuntime, logged: list[Logged]) -> list[bool]:
        """Settle the rounds a result or void closes, once; if the ledger cannot be written, the round waits in the
        log and is settled when the database answers again (settlement is exactly once whenever it happens)."""
        try:
            return [runtime.betting.settle_record(entry.record) for entry in logged]
        except StoreError as error:
            runtime.settlement_pending = str(error).splitlines()[0]
            log.error("table %s: settlement waits for the database: %s", runtime.table_id, runtime.settlement_pending)
            return []  # the watch settles it when the database answers (`_published` starts it)

    def _log_trouble(self, runtime: TableRuntime) -> None:
        """The log or the ledger did not answer: consoles show it, and the watch retries until they do."""
        runtime.version += 1
        asyncio.get_running_loop().create_task(self._notify(runtime))
        if self._log_watch is None or self._log_watch.done():
            self._log_watch = asyncio.get_running_loop().create_task(self._watch_log())

    async def _watch_log(self) -> None:
        """Every `LOG_RETRY` seconds, ask each troubled table's log (and ledger) again, until all answer."""
        troubled = [t for t in self.tables.values() if t.service.log_unavailable or t.settlement_pending]
        while troubled:
            await asyncio.sleep(LOG_RETRY)
            for runtime in troubled:
                # Asked off the event loop first (an unreachable server can take seconds to fail), then caught up on
                # it, where the table and its subscribers live.
                if not await asyncio.to_thread(runtime.service.probe_log) or not runtime.service.check_log():
                    continue
                if runtime.settlement_pending:
                    try:
                        runtime.betting.settle_unsettled(self.store.read(runtime.table_id))
                        runtime.settlement_pending = None
                        asyncio.get_running_loop().create_task(self._notify_settled())
                    except StoreError:
                        continue
                log.info("table %s: the log answers again", runtime.table_id)
                runtime.version += 1
                await self._notify(runtime)
            troubled = [t for t in self.tables.values() if t.service.log_unavailable or t.settlement_pending]

    def round_index(self, table_id: str) -> RoundIndex:
        """The table's round index, brought up to date with what the log gained since the last look."""
        return self.log_feed.round_index(table_id)

    # The results feed (dealer_ui/routes/feed.py serves it from any `FeedBackend`; this process's own tables here).

    def has_table(self, table_id: str) -> bool:
        return table_id in self.tables

    async def follow(self, table_id: str) -> None:
        """Nothing to do: this process publishes its tables itself."""

    def published_seq(self, table_id: str) -> int:
        return self.tables[table_id].service.published_seq

    def backlog(self, table_id: str, after: int, limit: int) -> tuple[list[dict[str, Any]], int]:
        return self.log_feed.backlog(table_id, after, self.published_seq(table_id), limit)

    def roads(self, table_id: str) -> dict[str, Any]:
        """The roads of the table's current shoe."""
        shoe = self.tables[table_id].service.state.shoe
        return compute_roads(self.round_index(table_id).shoe_results(shoe)).to_json()

    async def _notify_settled(self) -> None:
        async with self.settled:
            self.settled.notify_all()

    async def notify(self, table_id: str) -> None:
        """Wake the table's consoles (e.g. a chat message arrived)."""
        await self._notify(self.tables[table_id])

    async def _notify(self, runtime: TableRuntime) -> None:
        async with runtime.changed:
            runtime.changed.notify_all()

    def _follow_with_simulator(self, runtime: TableRuntime, logged: list[Logged]) -> None:
        """The simulated shoe is loaded with a fresh shuffle when the dealer confirms one, and cut where placed."""
        assert runtime.simulator is not None
        for entry in logged:
            if entry.record.kind == "CutCardPlaced":
                cards = seeded_shoe(runtime.config.procedure.decks, self._rng)
                self.shoes.save(runtime.table_id, int(entry.record.data["shoe"]), cards)  # before its first card
                runtime.simulator.load(cards, int(entry.record.data["cards_in_front"]))

    def draw_simulated(self, table_id: str) -> bool:
        """The dealer slides a card out of the simulated shoe; False if this table has no simulator."""
        simulator = self.tables[table_id].simulator
        if simulator is None:
            return False
        simulator.draw()
        return True

    async def _auto_deal(self, runtime: TableRuntime, seconds: float) -> None:
        """Draw a card whenever one is due, as a dealer would: only once the last card drawn has been logged (a card
        still on its way through the pty must not be followed by one nobody asked for)."""
        assert runtime.simulator is not None
        await asyncio.sleep(self._rng.uniform(0, seconds))  # tables do not all deal at the same instant
        in_flight: int | None = None  # `cards_drawn` when the last card was drawn, until that card is logged
        waited = 0.0
        while True:
            await asyncio.sleep(seconds)
            state = runtime.service.state
            if in_flight is not None and state.cards_drawn == in_flight and waited < AUTO_DEAL_PATIENCE:
                waited += seconds
                continue
            in_flight, waited = None, 0.0
            if state.phase in (Phase.BURNING, Phase.DEALING):
                in_flight = state.cards_drawn
                runtime.simulator.draw()
            elif (
                state.phase is Phase.BETTING_OPEN
                and state.round is not None
                and self.clock.now() >= state.round.closes_at
            ):
                with contextlib.suppress(ProcedureError, StoreError):  # closed meanwhile, or the log is down: later
                    await self.submit(runtime.table_id, c.CloseBetting(Actor(Role.DEALER, "auto")))

    async def _approval_timer(self, runtime: TableRuntime) -> None:
        """A player bank's approval timer (seed 001): once the round's approval deadline has passed by the studio's
        clock, a banker who has not approved it loses the bank, on the table's writer (one after the other with the
        table's commands and settlements). Looked at every `APPROVAL_TICK`; the database only once a deadline passed,
        once per round."""
        looked: str | None = None  # the round whose deadline was dealt with
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(APPROVAL_TICK)
            state = runtime.service.state
            deadline = runtime.betting.approval_deadline(state)
            if deadline is None or state.round is None or state.round.game_id == looked or self.clock.now() < deadline:
                continue
            if state.suspended:
                continue  # the deadline is looked at again once the pit boss has decided
            try:
                # The table as it is on its writer, after any command queued before this look.
                lost = await loop.run_in_executor(
                    runtime.writer, lambda: runtime.betting.expire_approval(runtime.service.state)
                )
            except StoreError as error:  # the database is down: look again at the next tick
                log.warning("table %s: the banker's approval deadline waits for the database: %s", runtime.table_id,
                            error)  # fmt: skip
                continue
            looked = state.round.game_id
            if lost is not None:
                log.info("table %s: %s did not approve %s in time and lost the bank", runtime.table_id, lost, looked)
                runtime.version += 1
                await self._notify(runtime)
