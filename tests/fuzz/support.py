"""What the fuzz tests share: their Hypothesis settings, and TOML written from values, to feed the config parsers.

Each property runs a moderate number of examples so that `pytest tests/fuzz` stays quick; STUDIO_FUZZ_SCALE=N
multiplies every count by N for a longer hunt (see the README's "Fuzzing" section).
"""

from __future__ import annotations

import math
import os
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st


def _scale() -> int:
    text = os.environ.get("STUDIO_FUZZ_SCALE", "1")
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"STUDIO_FUZZ_SCALE must be a whole number of at least 1, not {text!r}")
    return int(text)


SCALE = _scale()


def fuzz(max_examples: int, **options: Any) -> settings:
    """Settings for one property: `max_examples` (times STUDIO_FUZZ_SCALE), no deadline as in the suite's other
    properties, and any other setting given. In the suite (scale 1) the examples are the same at every run, so that a
    run fails for a change, not for the draw; a longer hunt (scale above 1) draws new ones each time."""
    return settings(max_examples=max_examples * SCALE, deadline=None, derandomize=SCALE == 1, **options)


# ---------------------------------------------------------------------------------------------------------------------
# TOML text from Python values: what a hand-edited file could hold, including the odd values (nan, inf, huge integers,
# control characters, empty and unicode keys) a well-formed file can still carry.


def _quoted(text: str) -> str:
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif " " <= char <= "~":
            out.append(char)
        else:
            code = ord(char)
            out.append(f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}")
    return '"' + "".join(out) + '"'


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _quoted(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_quoted(key)} = {toml_value(item)}" for key, item in value.items()) + "}"
    raise TypeError(f"no TOML for {value!r}")


def toml_document(data: dict[str, Any]) -> str:
    """A TOML document holding `data` (nested tables written inline)."""
    return "".join(f"{_quoted(key)} = {toml_value(value)}\n" for key, value in data.items())


keys = st.sampled_from(["", "id", "min", "max", "pays", "decks", "url", "x"]) | st.text(max_size=8)
scalars = st.one_of(
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1, 2**63, 10**30, -(10**30)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["", " ", "10", "10.50", "-5", "1e999999999", "1e-999999999", "NaN", "inf", "1/0", "push", "٣"]),
)
toml_values: st.SearchStrategy[Any] = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3), max_leaves=8
)
"""Any value a TOML file can hold (datetimes aside): what a mistyped or hostile file puts where a value goes."""


@st.composite
def mutated(draw: st.DrawFn, document: dict[str, Any]) -> dict[str, Any]:
    """`document` (parsed TOML) with a few changes: a value replaced by any other, a key removed, a key added."""
    data: dict[str, Any] = _copy(document)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(_paths(data))
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["replace", "remove", "add"]))
        if action == "replace" or not isinstance(parent, dict) or path[-1] not in parent:
            parent[path[-1]] = draw(toml_values)
        elif action == "remove":
            del parent[path[-1]]
        else:
            parent[draw(keys)] = draw(toml_values)
    return data


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy(item) for item in value]
    return value


def _paths(data: dict[str, Any]) -> st.SearchStrategy[tuple[Any, ...]]:
    """Every place in `data` a value sits: dictionary keys and list indexes, nested."""
    found: list[tuple[Any, ...]] = []

    def walk(value: Any, path: tuple[Any, ...]) -> None:
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, item in items:
            found.append((*path, key))
            walk(item, (*path, key))

    walk(data, ())
    return st.sampled_from(found) if found else st.just(("x",))
