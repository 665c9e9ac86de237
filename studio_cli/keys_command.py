"""`studio keys generate`: the Ed25519 key pair that signs the log's checkpoints (`studio run --signing-key`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

EPILOG = """\
The private key (studio-signing-key.pem, readable by its owner only) goes to the studio server alone; the public key
(studio-signing-key.pub.pem) goes to whoever checks the log: `studio log verify DB --checkpoints FILE --public-key
studio-signing-key.pub.pem`. A key pair is never overwritten.

example:
  studio keys generate --out /etc/studio/keys"""


def register(commands: Any) -> None:
    parser = commands.add_parser("keys", help="the key that signs the log's checkpoints", epilog=EPILOG,
                                 description="The key that signs the log's checkpoints.",
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    generate = actions.add_parser("generate", help="write a new Ed25519 key pair")
    generate.add_argument("--out", type=Path, default=Path("keys"), metavar="DIR", help="the folder (default: keys)")
    generate.set_defaults(run=run_generate)


def run_generate(args: argparse.Namespace) -> int:
    from studio.signing import Signer, generate_keys, load_private_key  # noqa: PLC0415 - loads only when used

    private, public = generate_keys(args.out)
    print(f"private key: {private} (keep it on the studio server only)")
    print(f"public key:  {public} (for whoever verifies the log)")
    print(f"key id:      {Signer(load_private_key(private)).key_id}")
    return 0
