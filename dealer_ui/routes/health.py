"""Operations: liveness (`/healthz`), readiness (`/readyz`) and Prometheus metrics (`/metrics`).

None of the three asks who is calling: an orchestrator's probes and a Prometheus server carry no studio account. They
reveal no card, bet, player, account or secret: table ids, phases, whether a table is suspended, card-source states,
sequence numbers and counts. They are meant for the studio's own network, like every staff route: a deployment
publishes only what game servers need (the feed, bets, wallets) and keeps these three (with the consoles) behind its
reverse proxy or on a private bind address; `studio run` binds 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client.exposition import choose_encoder
from pydantic import BaseModel

from dealer_ui.metrics import StudioMetrics
from dealer_ui.routes.lookup import studio_of
from dealer_ui.runtime import TableRuntime
from studio.ports import EventStore

router = APIRouter(tags=["operations"])

STORE_TIMEOUT = 2.0
"""Seconds the event store has to answer the readiness check (an unreachable database can take far longer to fail)."""


def supervisor_task_name(table_id: str) -> str:
    """The name `Studio.start` gives the asyncio task that supervises a table's card sources."""
    return f"supervisor:{table_id}"


def store_heads(store: EventStore, table_ids: list[str]) -> dict[str, int]:
    """The event store's answer to a trivial query: the last seq of each table's log (raises `StoreError` if it
    cannot answer)."""
    return {table_id: store.last_seq(table_id) for table_id in table_ids}


class Failure(BaseModel):
    check: str  # "event_store", "table T1 supervisor", "table T1 log", "table T1 settlement"
    reason: str  # one line


class SourceStatus(BaseModel):
    state: str  # connected, degraded, disconnected; "unknown" before the source was first opened
    detail: str = ""


class TableStatus(BaseModel):
    phase: str
    suspended: bool
    sources: dict[str, SourceStatus]
    seq: int  # the last record the table logged
    published_seq: int  # the last record it published (behind `seq` while suspended)


class Readiness(BaseModel):
    status: str  # "ready" or "not ready"
    failing: list[Failure]
    tables: dict[str, TableStatus]


class Liveness(BaseModel):
    status: str


@router.get("/healthz")
async def healthz() -> Liveness:
    """Liveness: the process answers. No authentication (it reveals nothing)."""
    return Liveness(status="ok")


@router.get(
    "/readyz",
    responses={503: {"model": Readiness, "description": "a check failed: each failing check with a one-line reason"}},
)
async def readyz(request: Request) -> Any:
    """Readiness: 200 when the event store answers a trivial query within 2 s, and for every table: its card-source
    supervisor runs, its log can be written and ends where its service says (no other writer, nothing lost), and no
    result or void waits to be settled; otherwise 503 naming each failing check. Each table's phase, suspension and
    card-source states are shown either way: a suspended table or a disconnected reader is the pit boss's business
    (the studio still serves), not a reason to take the server out.

    No authentication: it reveals table ids, phases, source states and seqs, nothing sensitive (see the module)."""
    studio = studio_of(request)
    failing: list[Failure] = []
    # Each table's seq is read on the event loop (where commands run) before the store is asked from a thread, and
    # again after (commands go on meanwhile): a consistent log ends between the two.
    before = {table_id: runtime.service.seq for table_id, runtime in studio.tables.items()}
    heads: dict[str, int] | None = None
    try:
        heads = await asyncio.wait_for(asyncio.to_thread(store_heads, studio.store, list(before)), STORE_TIMEOUT)
    except TimeoutError:
        failing.append(Failure(check="event_store", reason=f"no answer within {STORE_TIMEOUT:g} s"))
    except Exception as error:  # StoreError, or anything a driver lets through: the reason is what matters
        failing.append(Failure(check="event_store", reason=_one_line(error)))
    running = {task.get_name() for task in asyncio.all_tasks() if not task.done()}
    for table_id, runtime in studio.tables.items():
        head = None if heads is None else (before[table_id], heads[table_id])
        failing += table_failures(runtime, head, supervisor_task_name(table_id) in running)
    tables = {table_id: table_status(runtime) for table_id, runtime in studio.tables.items()}
    body = Readiness(status="not ready" if failing else "ready", failing=failing, tables=tables)
    if failing:
        return JSONResponse(body.model_dump(), status_code=503)
    return body


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}, "description": "Prometheus text"}},
)
async def metrics(request: Request) -> Response:
    """Prometheus metrics (text format; OpenMetrics if the scraper asks for it). Metric names and labels: README,
    "Operations". No authentication: counts and states, nothing sensitive (see the module); keep it on the studio's
    own network, or behind the reverse proxy's authentication if Prometheus scrapes from elsewhere."""
    studio_metrics: StudioMetrics = request.app.state.metrics
    encode, content_type = choose_encoder(request.headers.get("accept", ""))
    return Response(encode(studio_metrics.registry), media_type=content_type)


def table_failures(runtime: TableRuntime, head: tuple[int, int] | None, supervised: bool) -> list[Failure]:
    """What keeps one table from being ready. `head`: the table's seq before the store was asked, and the store's
    answer (None if it gave none)."""
    table_id, service = runtime.table_id, runtime.service
    failing: list[Failure] = []
    if not supervised:
        failing.append(
            Failure(check=f"table {table_id} supervisor", reason="the card-source supervisor is not running")
        )
    if service.log_unavailable:  # the table refuses commands until its log can be written again
        reason = f"cannot be written: {_one_line(service.log_unavailable)}"
        failing.append(Failure(check=f"table {table_id} log", reason=reason))
    elif head is not None and not head[0] <= head[1] <= service.seq:
        reason = f"the log ends at seq {head[1]} but the table service is at seq {service.seq}: " + (
            "another writer appended to this table" if head[1] > service.seq else "records are missing"
        )
        failing.append(Failure(check=f"table {table_id} log", reason=reason))
    if runtime.settlement_pending:
        reason = f"a result or void waits to be settled: {_one_line(runtime.settlement_pending)}"
        failing.append(Failure(check=f"table {table_id} settlement", reason=reason))
    return failing


def table_status(runtime: TableRuntime) -> TableStatus:
    states = runtime.source_states
    sources = {
        source.source_id: SourceStatus(state=health.state.value, detail=health.detail)
        if (health := states.get(source.source_id)) is not None
        else SourceStatus(state="unknown")
        for source in runtime.sources
    }
    service = runtime.service
    return TableStatus(phase=service.state.phase.value, suspended=service.state.suspended, sources=sources,
                       seq=service.seq, published_seq=service.published_seq)  # fmt: skip


def _one_line(error: BaseException | str) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
