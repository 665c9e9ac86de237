"""The OpenAPI page (/docs) served whole by the app itself: Swagger UI's files come from the `fastapi-swagger`
package, never from a CDN, so the page works on a studio's closed network. (ReDoc, which FastAPI would load from a
CDN, is not served.)"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi_swagger import patch_fastapi


def serve_docs(app: FastAPI) -> None:
    """Serve /docs, and Swagger UI's files under /swagger/, from this process. The app is made with FastAPI's own
    pages off (`docs_url=None, redoc_url=None, swagger_ui_oauth2_redirect_url=None`)."""
    patch_fastapi(app, docs_url="/docs", redirect_from_root_to_docs=False, title=f"{app.title} - API")
