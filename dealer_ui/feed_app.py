"""A feed server: the results feed alone (REST and WebSocket, the same routes and messages as the studio's), served
from Redis Streams and the log by a stateless process (`studio feed`). Run as many as the subscribers need, behind a
load balancer; game servers authenticate with the same API keys (read from the studio database)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CollectorRegistry, ProcessCollector
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import GaugeMetricFamily, Metric

from dealer_ui.api_docs import serve_docs
from dealer_ui.body_limit import BodyLimit
from dealer_ui.redis_feed import RedisFeedServer
from dealer_ui.routes import feed
from dealer_ui.security_headers import SecurityHeaders
from studio.clock import SystemClock
from studio.domain.records import StoreError
from studio.ports import Clock
from studio.store_sql import SqlEventStore
from studio.users import UserStore


class FeedServerCollector:
    """The feed server's state when Prometheus scrapes: `studio_feed_redis_up` (1 while the feed comes from Redis, 0
    while it comes from the log), and per table `studio_feed_subscribers` and `studio_feed_delivered_seq` (compare with
    the table process's `studio_log_seq` for the lag across processes)."""

    def __init__(self, server: RedisFeedServer) -> None:
        self.server = server

    def collect(self) -> Iterator[Metric]:
        redis_up = GaugeMetricFamily("studio_feed_redis_up", "1 while the feed is read from Redis, 0 from the log")
        redis_up.add_metric([], 1.0 if self.server.redis_up else 0.0)
        subscribers = GaugeMetricFamily("studio_feed_subscribers", "WebSocket subscribers", labels=["table"])
        delivered = GaugeMetricFamily("studio_feed_delivered_seq", "Seq delivered to subscribers", labels=["table"])
        for table, tailer in self.server.tailers.items():
            subscribers.add_metric([table], float(self.server.hub.subscribers(table)))
            delivered.add_metric([table], float(tailer.delivered))
        yield from (redis_up, subscribers, delivered)


def create_feed_app(database_url: str, redis_url: str, clock: Clock | None = None) -> FastAPI:
    store = SqlEventStore(database_url)
    users = UserStore(database_url, clock or SystemClock())
    server = RedisFeedServer(store, redis_url)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        reader = asyncio.create_task(server.run(), name="feed-reader")
        try:
            yield
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
            await server.close()
            store.close()
            users.close()

    description = "The results feed of every table, from Redis Streams, resumable from the log."
    app = FastAPI(title="Baccarat studio feed server", version="0.1.0", lifespan=lifespan, description=description,
                  docs_url=None, redoc_url=None, swagger_ui_oauth2_redirect_url=None)  # fmt: skip
    serve_docs(app)  # from local files: no CDN
    app.state.feed = server
    app.state.users = users
    app.include_router(feed.router)
    app.add_middleware(BodyLimit)  # 413 for a body over 64 KB, as the studio's own server
    app.add_middleware(SecurityHeaders)  # the studio's headers on every answer

    @app.get("/healthz", tags=["operations"])
    async def healthz() -> dict[str, str]:
        """Liveness: the process answers."""
        return {"status": "ok"}

    registry = CollectorRegistry()
    registry.register(FeedServerCollector(server))
    ProcessCollector(registry=registry)

    @app.get("/metrics", tags=["operations"], response_class=Response)
    async def metrics(request: Request) -> Response:
        """Prometheus metrics: whether Redis answers, and per table the subscribers and the seq delivered."""
        encode, content_type = choose_encoder(request.headers.get("accept", ""))
        return Response(encode(registry), media_type=content_type)

    @app.get("/readyz", tags=["operations"])
    async def readyz() -> JSONResponse:
        """Ready when the log answers (resumption needs it); Redis being down is reported, not a failure: the feed is
        then served from the log."""
        try:
            await asyncio.to_thread(store.streams)
        except StoreError as error:
            return JSONResponse({"status": "not ready", "log": str(error).splitlines()[0]}, 503)
        redis = "up" if server.redis_up else f"down ({server.error}); serving from the log"
        following = {table: tailer.delivered for table, tailer in server.tailers.items()}
        return JSONResponse({"status": "ready", "redis": redis, "following": following})

    return app
