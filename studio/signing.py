"""The studio's signing key (Ed25519, with the `cryptography` package) and the signed checkpoints it makes, kept in
the studio's database and appended to a plain file a studio can ship off-site (one JSON object per line).

- `generate_keys(folder)` writes the private key (PEM, readable by its owner only) and the public key beside it.
- `Signer` signs a table's head; `CheckpointStore` keeps each checkpoint in the database (insert only) and in the
  file, flushed to disk before it returns.
- `verify(checkpoint, public_key)` says whether a checkpoint was signed by that key's holder.
"""

from __future__ import annotations

import hashlib
import os
from datetime import datetime
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from sqlalchemy import insert, select
from sqlalchemy.engine import make_url
from sqlmodel import Field, SQLModel

from studio.database import BIG_INTEGER, WRITE_OPTION, database_errors, open_engine
from studio.domain.chain import Head
from studio.domain.checkpoints import Checkpoint, CheckpointReason
from studio.domain.errors import StudioError
from studio.schema import migrate

PRIVATE_NAME, PUBLIC_NAME = "studio-signing-key.pem", "studio-signing-key.pub.pem"


class SigningKeyError(StudioError):
    """A key file that cannot be read or is not an Ed25519 key."""


def key_id(public_key: Ed25519PublicKey) -> str:
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def generate_keys(folder: Path) -> tuple[Path, Path]:
    """Write a new key pair into `folder` (refusing to overwrite one): (private key file, public key file)."""
    folder.mkdir(parents=True, exist_ok=True)
    private, public = folder / PRIVATE_NAME, folder / PUBLIC_NAME
    if private.exists() or public.exists():
        raise SigningKeyError(f"{folder}: a key pair is there already; move it away first (keys are never overwritten)")
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())  # fmt: skip
    descriptor = os.open(private, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(pem)
    public.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                     serialization.PublicFormat.SubjectPublicKeyInfo))  # fmt: skip
    return private, public


def load_private_key(path: Path) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as error:
        raise SigningKeyError(f"{path}: cannot read the signing key: {error}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningKeyError(f"{path}: not an Ed25519 private key")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    try:
        key = serialization.load_pem_public_key(path.read_bytes())
    except (OSError, ValueError, TypeError) as error:
        raise SigningKeyError(f"{path}: cannot read the public key: {error}") from None
    if not isinstance(key, Ed25519PublicKey):
        raise SigningKeyError(f"{path}: not an Ed25519 public key")
    return key


class Signer:
    def __init__(self, key: Ed25519PrivateKey) -> None:
        self._key = key
        self.key_id = key_id(key.public_key())

    def sign(self, head: Head, at: datetime, reason: CheckpointReason) -> Checkpoint:
        unsigned = Checkpoint(head, at, reason, self.key_id)
        return Checkpoint(head, at, reason, self.key_id, self._key.sign(unsigned.payload()).hex())


def verify(checkpoint: Checkpoint, public_key: Ed25519PublicKey) -> bool:
    if checkpoint.key_id != key_id(public_key):
        return False
    try:
        public_key.verify(bytes.fromhex(checkpoint.signature), checkpoint.payload())
    except (InvalidSignature, ValueError):
        return False
    return True


class CheckpointRow(SQLModel, table=True):
    __tablename__ = "checkpoint"
    id: int | None = Field(default=None, primary_key=True, sa_type=BIG_INTEGER)
    table_id: str = Field(index=True)
    seq: int = Field(sa_type=BIG_INTEGER)
    line: str  # the checkpoint as its file line (`Checkpoint.to_line`): what was signed, and the signature


_C = CheckpointRow.__table__  # type: ignore[attr-defined]


@database_errors
class CheckpointStore:
    def __init__(self, url: str, file: Path) -> None:
        self._engine = open_engine(make_url(url))
        self._writer = self._engine.execution_options(**{WRITE_OPTION: True})
        self.file = file
        migrate(self._engine)

    def close(self) -> None:
        self._engine.dispose()

    def add(self, checkpoint: Checkpoint) -> None:
        """Keep a checkpoint in the database, then append it to the file and flush that to disk."""
        line = checkpoint.to_line()
        with self._writer.begin() as conn:
            conn.execute(insert(_C).values(table_id=checkpoint.head.stream, seq=checkpoint.head.seq, line=line))
        self.file.parent.mkdir(parents=True, exist_ok=True)
        with self.file.open("a", encoding="ascii") as out:
            out.write(line + "\n")
            out.flush()
            os.fsync(out.fileno())

    def last_seq(self, table_id: str) -> int:
        """The seq of the table's newest checkpoint (0 if none)."""
        with self._engine.connect() as conn:
            rows = conn.execute(select(_C.c.seq).where(_C.c.table_id == table_id).order_by(_C.c.id.desc()).limit(1))
            return int(rows.scalar() or 0)

    def lines(self) -> list[str]:
        with self._engine.connect() as conn:
            return [str(line) for line in conn.execute(select(_C.c.line).order_by(_C.c.id)).scalars()]
