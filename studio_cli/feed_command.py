"""`studio feed`: a stateless feed server for the results feed, from Redis Streams and the studio database."""

from __future__ import annotations

import argparse
import logging.config
from typing import Any

from studio.settings import sqlite_url
from studio_cli.arguments import port
from studio_cli.logs import FORMATS, logging_config

HELP = "serve the results feed from Redis and the log (a stateless feed server; run as many as needed)"
EPILOG = """\
The table processes publish to Redis (`studio run --redis URL`); each feed server reads it and serves the same
REST and WebSocket feed as the studio (/api/feed/{table}, /ws/feed/{table}?after=SEQ), with the same API keys.
If Redis is down, the feed is served from the log until it answers again.

example:
  studio feed --database postgresql+psycopg://studio@db/studio --redis redis://cache:6379/0 --port 8100"""


def register(commands: Any) -> None:
    parser = commands.add_parser("feed", help=HELP, description=HELP, epilog=EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--database", required=True, help="the studio database (SQLite file or URL)")
    parser.add_argument("--redis", required=True, help="Redis URL, e.g. redis://127.0.0.1:6379/0")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=port, default=8100)
    parser.add_argument("--log-format", choices=FORMATS, default="text")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import uvicorn  # noqa: PLC0415 - the server's libraries load only when it starts

    from dealer_ui.feed_app import create_feed_app  # noqa: PLC0415

    log_config = logging_config(args.log_format)
    logging.config.dictConfig(log_config)
    app = create_feed_app(sqlite_url(args.database), args.redis)
    logging.getLogger("studio_cli.feed").info("feed server on http://%s:%s (Redis %s)", args.host, args.port,
                                              args.redis)  # fmt: skip
    uvicorn.run(app, host=args.host, port=args.port, log_config=log_config, ws_per_message_deflate=False)
    return 0
