"""How `studio run` writes its log: text for a terminal, or JSON, one object per line, for a log collector.

Both formats give the time (UTC, ISO-8601, to the millisecond), the level, the logger and the message, then the
structured fields a line was given with `extra=` (`table`, `game_id`, `actor`, `seq`, ...); uvicorn's access lines
also get `client`, `method`, `path` and `status`. The time is the logging module's stamp of when the line was written:
the time of each fact is in the event log, on the studio's clock. Secrets passed in a query string (`token=`, `key=`:
a WebSocket client may sign in that way) are masked in every line.

The same configuration is given to uvicorn (`log_config`), so its lines and the studio's come out alike on stderr.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime
from typing import Any

FORMATS = ("text", "json")
UVICORN_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access")

_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message",
    "asctime",
    "color_message",  # uvicorn's copy of the message with terminal colours
    "taskName",  # Python 3.12+
}
_SECRET = re.compile(r"([?&](?:token|key|api_key)=)[^&\s\"']+", re.IGNORECASE)


def utc_time(created: float) -> str:
    """`2024-05-01T12:00:00.123Z`."""
    return datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def redact(text: str) -> str:
    return _SECRET.sub(r"\1[redacted]", text)


def fields(record: logging.LogRecord) -> dict[str, Any]:
    """The structured fields a line was given with `extra=`."""
    return {key: value for key, value in vars(record).items() if key not in _STANDARD and not key.startswith("_")}


def request_fields(record: logging.LogRecord) -> dict[str, Any]:
    """uvicorn's request line taken apart (its message says the same for a reader)."""
    args = record.args
    if record.name != "uvicorn.access" or not isinstance(args, tuple) or len(args) != 5:
        return {}
    client, method, path, _http_version, status = args
    return {"client": client, "method": method, "path": redact(str(path)), "status": status}


def _json_value(value: object) -> object:
    return value.isoformat() if isinstance(value, datetime) else str(value)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, the structured fields, and any exception's traceback."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": utc_time(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": redact(record.getMessage()),
        }
        for key, value in {**request_fields(record), **fields(record)}.items():
            entry.setdefault(key, value)  # a field never hides one of the four above
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False, default=_json_value)


class TextFormatter(logging.Formatter):
    """`2024-05-01T12:00:00.123Z WARNING dealer_ui.table_log: table T1 suspended: ... [table=T1 seq=12]`."""

    def format(self, record: logging.LogRecord) -> str:
        line = f"{utc_time(record.created)} {record.levelname} {record.name}: {redact(record.getMessage())}"
        extra = fields(record)
        if extra:
            line += " [" + " ".join(f"{key}={value}" for key, value in extra.items()) + "]"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        if record.stack_info:
            line += "\n" + self.formatStack(record.stack_info)
        return line


def logging_config(log_format: str, level: str = "INFO") -> dict[str, Any]:
    """A `logging.config.dictConfig` configuration (also uvicorn's `log_config`): every logger, uvicorn's included,
    writes through one handler on stderr in the given format."""
    if log_format not in FORMATS:
        raise ValueError(f"log format {log_format!r} is not one of {', '.join(FORMATS)}")
    formatter = JsonFormatter if log_format == "json" else TextFormatter
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"studio": {"()": formatter}},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "studio", "stream": "ext://sys.stderr"}},
        # uvicorn's loggers lose the handlers of its default configuration and pass their lines to the root's.
        "loggers": {name: {"handlers": [], "propagate": True} for name in UVICORN_LOGGERS},
        "root": {"handlers": ["stderr"], "level": level},
    }
