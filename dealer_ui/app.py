"""The studio server: one FastAPI app for consoles, pit bosses, surveillance and game servers. OpenAPI at /docs."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

from dealer_ui import table_log
from dealer_ui.api_docs import serve_docs
from dealer_ui.body_limit import BodyLimit
from dealer_ui.metrics import StudioMetrics
from dealer_ui.routes import access as access_routes
from dealer_ui.routes import bets, chat, evidence, feed, health, public, seats, session, surveillance, tables
from dealer_ui.routes import shoe_figures as shoe_figures_routes
from dealer_ui.runtime import Studio, StudioSettings
from dealer_ui.security_headers import SecurityHeaders
from dealer_ui.shoe_figures import ShoeFigures
from studio.domain.records import StoreError
from studio.ports import Clock

STATIC = Path(__file__).parent / "static"
FULL_COLLECTION_EVERY = 100  # middle-generation collections between full ones (Python's default: 10)


def create_app(settings: StudioSettings, clock: Clock | None = None) -> FastAPI:
    studio = Studio(settings, clock)
    metrics = StudioMetrics(studio)  # a registry per app: several apps in one process never share a counter
    # The live shoe figures follow every table's log on a thread of their own, off the tables' writers.
    figures = ShoeFigures(studio.store, {table_id: runtime.config for table_id, runtime in studio.tables.items()})
    studio.observers += [metrics.observe, table_log.observe, figures.observe]

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await studio.start()
        figures.start()
        # A full garbage collection walks every object: with a thousand feed connections open it stalls the event
        # loop for 100 ms or more. What exists at start-up (libraries, configuration, the tables) is frozen out of
        # the collector's walks, and full collections are made rarer; young objects are still collected as usual.
        gc.collect()
        gc.freeze()
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, FULL_COLLECTION_EVERY)
        try:
            yield
        finally:
            figures.stop()
            await studio.stop()

    app = FastAPI(
        title="Baccarat studio",
        description="Dealer console, pit boss and surveillance views, and the results feed of a live baccarat studio.",
        version="0.1.0",
        lifespan=lifespan,
        docs_url=None,  # /docs is served from local files by `serve_docs`: no CDN on a studio network
        redoc_url=None,
        swagger_ui_oauth2_redirect_url=None,
    )
    serve_docs(app)
    app.state.studio = studio
    app.state.feed = studio  # the results feed of this process's own tables
    app.state.users = studio.users
    app.state.metrics = metrics
    app.state.shoe_figures = figures
    for module in (
        session,
        tables,
        bets,
        seats,
        chat,
        feed,
        public,
        surveillance,
        evidence,
        health,
        shoe_figures_routes,
    ):
        app.include_router(module.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.include_router(access_routes.router)  # the access log, unlocking accounts
    app.add_middleware(BodyLimit)  # 413 for a body over 64 KB (a batch of bets: 256 KB), before anything parses it
    app.add_middleware(SecurityHeaders)  # CSP, nosniff, no-referrer on every answer, the 413s included

    @app.exception_handler(StoreError)
    async def database_unavailable(request: Request, error: Exception) -> JSONResponse:
        """The database did not answer: nothing was changed; the client may try again (the table resumes by itself)."""
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        return JSONResponse({"detail": f"the studio database is unavailable, nothing was changed: {reason}"}, 503)

    @app.get("/", include_in_schema=False)
    def home() -> RedirectResponse:
        return RedirectResponse("/static/index.html")

    return app
