"""Group commit of a table's bets: the requests that wait together are placed together, in one transaction.

Rules held here:
- A bet request waits in the table's queue; the table's writer thread takes every request waiting and places them in
  one transaction (`BettingService.place_many`), so a burst of bets costs one durable write per group, not per bet.
  While one group commits, the next one gathers.
- Each request keeps its own answer: every rule is checked per request inside that transaction, against the requests
  before it, and a refused request changes nothing and does not fail the others (`WalletStore.place_batch`).
- A request is answered only once its group is committed: an accepted bet is durable before its answer. An error of
  the database fails every request of its group, and none of them was placed.
- The groups run on the table's writer, one after the other with the table's commands; "no more bets" places what
  waits first (`flush`), so it is never logged while an accepted bet is uncommitted. The timer is checked at each
  request's arrival and the phase when its group is placed: a request that reaches its group after "no more bets" is
  refused as late, and changes nothing.
- Undo, double and repeat run on the writer too (`run`), after the bets that arrived before them.
- A game server's batch (many of its players' requests in one call: `place_each`) joins the queue whole, so its
  requests are placed in one group, in their order, each with its own answer.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, replace
from typing import TypeVar

from studio.betting import BetRequest, BettingService
from studio.domain.errors import BetRejected
from studio.domain.procedure import TableState
from studio.wallets import PlacedBet

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _Waiting:
    request: BetRequest
    answer: asyncio.Future[list[PlacedBet]]


class BetBatches:
    """One table's queue of bet requests and its group commits, on the table's writer (`writer`, one thread)."""

    def __init__(self, betting: BettingService, state: Callable[[], TableState], writer: Executor) -> None:
        self._betting = betting
        self._state = state  # the table as its writer sees it
        self._writer = writer
        self._lock = threading.Lock()
        self._waiting: list[_Waiting] = []
        self._scheduled = False  # a group is queued on the writer and has not taken the waiting requests yet

    async def place(self, game_server: str, player_id: str, bet_id: str, bet_type: str,
                    stake: int) -> list[PlacedBet]:  # fmt: skip
        """Place a bet (or a shortcut) in the next group; its bets once the group is committed, or its refusal."""
        arrived = self._betting.clock.now()
        answer: asyncio.Future[list[PlacedBet]] = asyncio.get_running_loop().create_future()
        request = BetRequest(game_server, player_id, bet_id, bet_type, stake, arrived)
        with self._lock:
            self._waiting.append(_Waiting(request, answer))
            start = not self._scheduled
            self._scheduled = True
        if start:
            self._writer.submit(self._place_waiting)
        return await answer

    async def place_each(self, asks: Sequence[BetRequest]) -> list[list[PlacedBet] | BaseException]:
        """Place many requests (a game server's batch) in the next group, all of them in that one group, in order:
        each one's bets once the group is committed, or its refusal (`BetRejected`; the database's error fails all).
        Their `arrived` is now, whatever it was."""
        if not asks:
            return []
        arrived = self._betting.clock.now()
        loop = asyncio.get_running_loop()
        group = [_Waiting(replace(ask, arrived=arrived), loop.create_future()) for ask in asks]
        with self._lock:
            self._waiting.extend(group)
            start = not self._scheduled
            self._scheduled = True
        if start:
            self._writer.submit(self._place_waiting)
        return list(await asyncio.gather(*(waiting.answer for waiting in group), return_exceptions=True))

    async def run(self, action: Callable[[], T]) -> T:
        """Run `action` on the table's writer, after the bets waiting now are placed."""

        def flushed() -> T:
            self.flush()
            return action()

        return await asyncio.get_running_loop().run_in_executor(self._writer, flushed)

    def flush(self) -> None:
        """Place the requests waiting now (on the table's writer: before "no more bets" is logged)."""
        self._place_waiting()

    def _place_waiting(self) -> None:
        with self._lock:
            group, self._waiting = self._waiting, []
            self._scheduled = False
        if not group:
            return
        try:
            answers = self._betting.place_many(self._state(), [waiting.request for waiting in group])
        except Exception as error:  # the database failed the group: nothing of it was placed, each request is told
            _answer_all(group, error)
            return
        _answer(group, answers)


def _answer(group: list[_Waiting], answers: list[list[PlacedBet] | BetRejected]) -> None:
    """Hand each request its answer on its event loop (the requests of one table share one loop)."""

    def deliver() -> None:
        for waiting, answer in zip(group, answers, strict=True):
            if waiting.answer.done():
                continue  # the client went away: its bet stands (or was refused) all the same
            if isinstance(answer, BetRejected):
                waiting.answer.set_exception(answer)
            else:
                waiting.answer.set_result(answer)

    _on_loop(group, deliver)


def _answer_all(group: list[_Waiting], error: BaseException) -> None:
    def deliver() -> None:
        for waiting in group:
            if not waiting.answer.done():
                waiting.answer.set_exception(error)

    _on_loop(group, deliver)


def _on_loop(group: list[_Waiting], deliver: Callable[[], None]) -> None:
    loop = group[0].answer.get_loop()
    if loop.is_closed():
        return
    loop.call_soon_threadsafe(deliver)
