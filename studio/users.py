"""People and machines that may act on the studio: accounts with hashed passwords, sign-in sessions and API keys.

Rules held here:
- Passwords and PINs are hashed with Argon2 (argon2-cffi); nothing stores or logs them in clear.
- A session token and an API key are random (256 bits), shown once, and stored only as their SHA-256.
- Every account has exactly one role; the role decides what it may do (`dealer_ui` enforces it).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlmodel import Field, Session, SQLModel, select

from studio.database import database_errors, open_engine
from studio.domain.errors import StudioError
from studio.domain.roles import Actor, Role
from studio.ports import Clock
from studio.schema import migrate

SESSION_HOURS = 12


class UserError(StudioError):
    """An account could not be created or used as asked."""


@dataclass(frozen=True, slots=True)
class Principal:
    name: str
    role: Role

    @property
    def actor(self) -> Actor:
        """This person or machine as the actor of a command (the log names it "pit_boss:bob")."""
        return Actor(self.role, self.name)


class UserAccount(SQLModel, table=True):
    __tablename__ = "user_account"
    name: str = Field(primary_key=True)
    role: str
    password_hash: str
    created_at: str
    disabled: bool = False
    display_name: str | None = None  # what players are shown (a dealer on the results feed); never the account name


class UserSession(SQLModel, table=True):
    __tablename__ = "user_session"
    token_hash: str = Field(primary_key=True)
    name: str = Field(index=True)
    role: str
    expires_at: str


class ApiKey(SQLModel, table=True):
    __tablename__ = "api_key"
    key_hash: str = Field(primary_key=True)
    name: str = Field(index=True)
    created_at: str


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _check_name(name: str) -> str:
    cleaned = name.strip()
    if not cleaned or len(cleaned) > 64 or not all(ch.isalnum() or ch in "._-" for ch in cleaned):
        raise UserError(f"invalid account name {name!r}: 1 to 64 letters, digits, '.', '_' or '-'")
    return cleaned


def _check_display_name(display_name: str) -> str:
    cleaned = " ".join(display_name.split())
    if not cleaned or len(cleaned) > 40 or not all(ch.isprintable() for ch in cleaned):
        raise UserError(f"invalid display name {display_name!r}: 1 to 40 printable characters")
    return cleaned


@database_errors
class UserStore:
    def __init__(self, url: str, clock: Clock) -> None:
        self._engine = open_engine(make_url(url))
        self._clock = clock
        self._hasher = PasswordHasher()
        migrate(self._engine)

    def close(self) -> None:
        self._engine.dispose()

    def add_user(self, name: str, role: Role, password: str, display_name: str | None = None) -> Principal:
        name = _check_name(name)
        shown = None if display_name is None else _check_display_name(display_name)
        if role is Role.GAME_SERVER:
            raise UserError("game servers sign in with API keys: use `studio users add-key NAME`")
        if len(password) < 4:
            raise UserError("a password or PIN needs at least 4 characters")
        account = UserAccount(name=name, role=role.value, password_hash=self._hasher.hash(password),
                              created_at=self._clock.now().isoformat(), display_name=shown)  # fmt: skip
        try:
            with Session(self._engine) as session:
                session.add(account)
                session.commit()
        except IntegrityError:
            raise UserError(f"an account named {name!r} already exists") from None
        return Principal(name, role)

    def set_display_name(self, name: str, display_name: str) -> str:
        """Set what players are shown for this person (the dealer on the feed); returns it as stored."""
        shown = _check_display_name(display_name)
        with Session(self._engine) as session:
            account = session.get(UserAccount, name.strip())
            if account is None:
                raise UserError(f"no account named {name!r}")
            account.display_name = shown
            session.add(account)
            session.commit()
        return shown

    def display_name(self, name: str) -> str | None:
        """What players are shown for this person; None when none was set."""
        with Session(self._engine) as session:
            account = session.get(UserAccount, name)
            return None if account is None else account.display_name

    def users(self) -> list[Principal]:
        with Session(self._engine) as session:
            return [
                Principal(u.name, Role(u.role)) for u in session.exec(select(UserAccount).order_by(UserAccount.name))
            ]

    def authenticate(self, name: str, password: str) -> Principal | None:
        with Session(self._engine) as session:
            account = session.get(UserAccount, name.strip())
        if account is None or account.disabled:
            self._hasher.hash(password)  # the same work whether or not the name exists
            return None
        try:
            self._hasher.verify(account.password_hash, password)
        except (VerificationError, InvalidHashError):
            return None
        return Principal(account.name, Role(account.role))

    def open_session(self, principal: Principal) -> str:
        token = secrets.token_urlsafe(32)
        expires = self._clock.now() + timedelta(hours=SESSION_HOURS)
        with Session(self._engine) as session:
            session.add(UserSession(token_hash=_digest(token), name=principal.name, role=principal.role.value,
                                    expires_at=expires.isoformat()))  # fmt: skip
            session.commit()
        return token

    def close_session(self, token: str) -> None:
        with Session(self._engine) as session:
            found = session.get(UserSession, _digest(token))
            if found is not None:
                session.delete(found)
                session.commit()

    def principal_for_session(self, token: str) -> Principal | None:
        try:
            with Session(self._engine) as session:
                found = session.get(UserSession, _digest(token))
        except SQLAlchemyError:
            return None
        if found is None or datetime.fromisoformat(found.expires_at) <= self._clock.now():
            return None
        return Principal(found.name, Role(found.role))

    def add_api_key(self, name: str) -> str:
        """A new API key for a game server; the key is returned once and stored only as its hash."""
        name = _check_name(name)
        key = "sk_" + secrets.token_urlsafe(32)
        with Session(self._engine) as session:
            session.add(ApiKey(key_hash=_digest(key), name=name, created_at=self._clock.now().isoformat()))
            session.commit()
        return key

    def api_keys(self) -> list[tuple[str, str]]:
        """Each game server's keys: (name, when it was made), oldest first. The keys themselves are not kept."""
        with Session(self._engine) as session:
            rows = session.exec(select(ApiKey).order_by(ApiKey.created_at, ApiKey.name))
            return [(row.name, row.created_at) for row in rows]

    def principal_for_api_key(self, key: str) -> Principal | None:
        with Session(self._engine) as session:
            found = session.get(ApiKey, _digest(key))
        return None if found is None else Principal(found.name, Role.GAME_SERVER)
