"""`studio run`: the studio server. With no arguments: embedded defaults, demo accounts, a simulated shoe."""

from __future__ import annotations

import argparse
import asyncio
import logging
import logging.config
from pathlib import Path
from typing import Any

from studio.access import load_access_policy
from studio.domain.errors import StudioError
from studio_cli.arguments import ACCESS_ENV, REDIS_ENV, database_of, from_environment, port
from studio_cli.logs import FORMATS, logging_config

DEMO_GAME_SERVER = "demo-game-server"  # the demo game server's name at the studio (its API key's name)
DEMO_KEY_FILE = "demo-game-server.key"
HELP = "start the studio server (dealer console, pit boss, surveillance, results feed)"
EPILOG = """\
With no arguments: SQLite in data/studio.db, one table T1 read from the built-in shoe simulator (a smart shoe on a
pseudo-terminal), demo accounts, http://127.0.0.1:8000, and the demo game server with its player page on
http://127.0.0.1:8001 (--demo-port).

examples:
  studio run
  studio run --table config/tables/t7.toml --database postgresql+psycopg://studio@db/studio --no-demo
  studio run --auto-deal 1.5        the simulated shoe deals by itself whenever a card is due
  studio run --log-format json      one JSON object per log line on stderr, for a log collector
  studio run --redis redis://127.0.0.1:6379/0   also publish the feed to Redis for `studio feed` servers

Operations: GET /healthz (liveness), GET /readyz (readiness), GET /metrics (Prometheus); see the README."""


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "run", help=HELP, description=HELP, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=port, default=8000)
    parser.add_argument("--database", help="SQLite file or database URL (default: $STUDIO_DATABASE_URL, or the file "
                        "$STUDIO_DATABASE_URL_FILE names, else data/studio.db)")  # fmt: skip
    parser.add_argument("--access-config", type=Path, metavar="FILE",
                        help="sessions by role, lockout, HTTPS (default: $STUDIO_ACCESS_CONFIG, else the built-in "
                        "policy; see config/access.toml)")  # fmt: skip
    parser.add_argument("--table", type=Path, action="append", default=[], metavar="FILE",
                        help="a table's TOML file (repeat for several tables; default: one table T1)")  # fmt: skip
    parser.add_argument("--no-demo", dest="demo", action="store_false",
                        help="no demo accounts and no demo game server")  # fmt: skip
    parser.add_argument("--demo-port", type=port, default=8001,
                        help="demo mode: the demo game server and its player page (default 8001)")  # fmt: skip
    parser.add_argument("--auto-deal", type=float, metavar="SECONDS", help="the simulated shoe deals by itself")
    parser.add_argument("--redis", metavar="URL",
                        help="also publish the results feed to Redis for feed servers "
                        "(default: $STUDIO_REDIS_URL)")  # fmt: skip
    parser.add_argument(
        "--signing-key",
        type=Path,
        metavar="FILE",
        help="the Ed25519 key that signs checkpoints (studio keys generate; demo mode makes one)",
    )
    parser.add_argument(
        "--checkpoint-minutes",
        type=float,
        default=10.0,
        metavar="N",
        help="checkpoint a table whose log grows at least every N minutes (and at each shoe's end)",
    )
    parser.add_argument(
        "--checkpoint-file",
        type=Path,
        metavar="FILE",
        help="append checkpoints here too, to ship off-site (default: beside the database)",
    )
    parser.add_argument("--log-format", choices=FORMATS, default="text",
                        help="log lines as text (for a terminal, the default) or JSON objects, one a line")  # fmt: skip
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    # The server's libraries load only when the server starts, not for every `studio` command.
    import uvicorn  # noqa: PLC0415

    from dealer_ui.app import create_app  # noqa: PLC0415
    from dealer_ui.runtime import DEMO_ACCOUNTS, StudioSettings  # noqa: PLC0415
    from dealer_ui.ws_protocol import DirectWebSocketProtocol  # noqa: PLC0415

    log_config = logging_config(args.log_format)
    logging.config.dictConfig(log_config)  # the studio's own lines, from here on; uvicorn applies it again
    # On a terminal these go to stdout as they are; in JSON every line of the output is an object.
    say = print if args.log_format == "text" else logging.getLogger("studio_cli.run").info
    # Secrets come from the environment (or a file it names) rather than the command line, where `ps` shows them.
    args.database = database_of(args.database)
    args.redis = args.redis or from_environment(REDIS_ENV)
    access_file = args.access_config or from_environment(ACCESS_ENV)
    access = load_access_policy(Path(access_file) if access_file else None)
    if args.checkpoint_minutes <= 0:
        raise StudioError(f"--checkpoint-minutes must be positive, not {args.checkpoint_minutes}")
    settings = StudioSettings(args.database, tuple(args.table), args.demo, args.auto_deal, redis_url=args.redis,
                              signing_key=args.signing_key, checkpoint_minutes=args.checkpoint_minutes,
                              checkpoint_file=args.checkpoint_file, access=access)  # fmt: skip
    app = create_app(settings)  # configuration errors surface here, before the server starts
    url = f"http://{args.host}:{args.port}"
    say(f"Studio on {url} — dealer console {url}/static/console.html, API docs {url}/docs")
    if settings.demo:
        accounts = ", ".join(f"{name}/{password} ({role.value})" for name, role, password in DEMO_ACCOUNTS)
        say(f"DEMO MODE — sign in with: {accounts}")
    else:
        say("Create accounts with: studio users add NAME --role dealer|pit_boss|surveillance|admin")
    # Feed messages are small (~250 bytes): compressing each one for every subscriber costs more than it saves, and
    # without compression one frame's bytes go to every subscriber, written straight to its socket (ws=).
    configs = [uvicorn.Config(app, host=args.host, port=args.port, log_level="info", log_config=log_config,
                              ws=DirectWebSocketProtocol, ws_per_message_deflate=False)]  # fmt: skip
    if settings.demo:
        from demo_game_server.app import create_app as create_demo  # noqa: PLC0415

        # The demo game server is a client like any other: its own API key, made as `studio users add-key` makes
        # one (kept beside the database so restarts reuse it), and the studio's public API over HTTP.
        users = app.state.studio.users
        key_file = (Path(args.database).parent if "://" not in args.database else Path("data")) / DEMO_KEY_FILE
        key = key_file.read_text().strip() if key_file.exists() else ""
        if not key or users.principal_for_api_key(key) is None:
            key = users.add_api_key(DEMO_GAME_SERVER)
            key_file.parent.mkdir(parents=True, exist_ok=True)
            key_file.write_text(key + "\n")
            key_file.chmod(0o600)
        demo = create_demo(url, key)
        configs.append(uvicorn.Config(demo, host=args.host, port=args.demo_port, log_level="info",
                                      log_config=log_config))  # fmt: skip
        say(f"Demo game server on http://{args.host}:{args.demo_port} — player page "
            f"http://{args.host}:{args.demo_port}/static/player.html?player=demo-ana")  # fmt: skip
    asyncio.run(_serve(*[uvicorn.Server(config) for config in configs]))
    return 0


async def _serve(studio: Any, demo: Any = None) -> None:
    """The studio's server and, in demo mode, the demo game server's, in one event loop. The demo's trouble (its port
    in use) is said and leaves the studio running; when the studio stops, so does the demo."""

    async def serve_demo() -> None:
        try:
            await demo.serve()
        except SystemExit:  # uvicorn exits when it cannot bind; it has logged why
            logging.getLogger("studio_cli.run").warning("the demo game server could not start; the studio runs on")

    task = asyncio.create_task(serve_demo()) if demo is not None else None
    await studio.serve()
    if task is not None:
        demo.should_exit = True
        await task
    if not studio.started:
        raise SystemExit(3)  # the studio could not start (uvicorn said why: a port in use, a failed startup)
