"""`studio feed`: a stateless feed server for the results feed, from Redis Streams and the studio database."""

from __future__ import annotations

import argparse
import logging.config
from typing import Any

from studio.domain.errors import StudioError
from studio.settings import sqlite_url
from studio_cli.arguments import DATABASE_ENV, REDIS_ENV, from_environment, hide_password, port
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
    parser.add_argument("--database", help="the studio database (SQLite file or URL; default: $STUDIO_DATABASE_URL)")
    parser.add_argument("--redis", help="Redis URL, e.g. redis://127.0.0.1:6379/0 (default: $STUDIO_REDIS_URL)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=port, default=8100)
    parser.add_argument("--log-format", choices=FORMATS, default="text")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import uvicorn  # noqa: PLC0415 - the server's libraries load only when it starts

    from dealer_ui.feed_app import create_feed_app  # noqa: PLC0415
    from dealer_ui.ws_protocol import DirectWebSocketProtocol  # noqa: PLC0415

    log_config = logging_config(args.log_format)
    logging.config.dictConfig(log_config)
    # Secrets come from the environment (or a file it names) rather than the command line, where `ps` shows them.
    database = args.database or from_environment(DATABASE_ENV)
    redis = args.redis or from_environment(REDIS_ENV)
    if not database or not redis:
        raise StudioError("a feed server needs the database and Redis: --database and --redis, or "
                          "STUDIO_DATABASE_URL and STUDIO_REDIS_URL in its environment (or *_FILE naming a file "
                          "that holds each)")  # fmt: skip
    app = create_feed_app(sqlite_url(database), redis)
    logging.getLogger("studio_cli.feed").info("feed server on http://%s:%s (Redis %s)", args.host, args.port,
                                              hide_password(redis))  # fmt: skip
    # One frame's bytes go to every subscriber, written straight to its socket (dealer_ui/fanout.py).
    uvicorn.run(app, host=args.host, port=args.port, log_config=log_config, ws=DirectWebSocketProtocol,
                ws_per_message_deflate=False)  # fmt: skip
    return 0
