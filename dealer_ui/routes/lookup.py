"""What every route looks up first: the running studio, and a table of it (404 when there is no such table)."""

from __future__ import annotations

from fastapi import HTTPException, Request

from dealer_ui.runtime import Studio, TableRuntime


def studio_of(request: Request) -> Studio:
    studio: Studio = request.app.state.studio
    return studio


def runtime_of(request: Request, table_id: str) -> TableRuntime:
    runtime = studio_of(request).tables.get(table_id)
    if runtime is None:
        raise HTTPException(404, f"no table {table_id!r}")
    return runtime
