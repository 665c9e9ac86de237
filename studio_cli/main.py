"""The `studio` command: one sub-command per job. User errors print one line and exit non-zero, never a traceback."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from studio.domain.errors import StudioError
from studio_cli import (
    bench_command,
    camera_command,
    db_command,
    feed_command,
    keys_command,
    log_command,
    odds_command,
    roads_command,
    run_command,
    shoe_sim_command,
    simulate_command,
    users_command,
)

DESCRIPTION = """\
Studio control for live-dealer baccarat.

Start with `studio odds` to see the exact value of every bet for an 8-deck shoe, or
`studio simulate --seed 1` to watch a whole shoe dealt through the procedure engine.
Each command has its own help: `studio COMMAND --help`."""

EXIT_USER_ERROR = 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="studio", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    run_command.register(commands)
    feed_command.register(commands)
    users_command.register(commands)
    db_command.register(commands)
    odds_command.register(commands)
    simulate_command.register(commands)
    log_command.register(commands)
    keys_command.register(commands)
    roads_command.register(commands)
    shoe_sim_command.register(commands)
    camera_command.register(commands)
    bench_command.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result: int = args.run(args)
    except StudioError as error:
        print(f"studio: error: {error}", file=sys.stderr)
        return EXIT_USER_ERROR
    except BrokenPipeError:
        # The reader went away (`studio simulate | head`): stop quietly, as other command-line tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as error:
        print(f"studio: error: {error.filename or ''}: {error.strerror or error}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        return 130
    return result


if __name__ == "__main__":
    sys.exit(main())
