"""`studio bench`: the benchmark suite of bench/run.py, run from the checkout.

The suite lives in the repository's bench/ folder, which is not part of the installed package: this command finds it
beside the studio_cli package (a checkout, or an editable install of one) and hands every argument to bench/run.py's
`main`, so `studio bench ARGS` and `python bench/run.py ARGS` are one and the same. Nothing is loaded until the
command runs, so `studio --help` stays fast."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from studio.domain.errors import StudioError

BENCH_DIR = Path(__file__).resolve().parents[1] / "bench"
HELP = "run the benchmarks of bench/ and compare each figure with its target (bench/run.py)"
MODULE_NAME = "bench_run"


def register(commands: Any) -> None:
    # bench/run.py parses the options itself. With "+" as this parser's only option prefix, argparse passes every
    # argument (--quick, --only odds, --help) through as a plain word instead of rejecting those it does not know.
    parser = commands.add_parser("bench", help=HELP, description=HELP, add_help=False, prefix_chars="+")
    parser.add_argument("arguments", nargs="*", help=argparse.SUPPRESS)
    parser.set_defaults(run=run)


def load_runner(bench_dir: Path = BENCH_DIR) -> ModuleType:
    """bench/run.py as a module; StudioError when this installation has no bench/ folder (a wheel, not a checkout)."""
    script = bench_dir / "run.py"
    if not script.is_file():
        raise StudioError(
            f"{script} not found: `studio bench` runs the benchmarks of a checkout of the repository "
            "(bench/ is not installed with the package)"
        )
    spec = importlib.util.spec_from_file_location(MODULE_NAME, script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[MODULE_NAME] = module  # its dataclasses look their module up while being defined
    spec.loader.exec_module(module)
    return module


def run(args: argparse.Namespace) -> int:
    return int(load_runner().main(args.arguments, prog="studio bench"))
