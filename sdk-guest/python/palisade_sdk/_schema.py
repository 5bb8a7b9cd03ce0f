"""JSON Schemas from type hints, the conversion of JSON arguments to the hinted types, and
Google-style docstrings."""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import inspect
import re
import types
import typing
from typing import Any, Callable

from ._results import to_json

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

SUPPORTED = (
    "str, int, float, bool, None, list[T], tuple[T, ...], set[T], dict[str, T], Optional[T] or "
    "T | None, unions, Literal[...], Enum, TypedDict, dataclasses, Annotated[T, 'description'] "
    "and typing.Any"
)


class SchemaError(TypeError):
    """A type hint the SDK cannot express as JSON Schema."""


class ArgumentError(ValueError):
    """A JSON value that does not fit the hinted type."""


Convert = Callable[[Any], Any]

# TypedDict key qualifiers, which `get_type_hints(include_extras=True)` keeps.
_QUALIFIERS = tuple(
    q for q in (getattr(typing, n, None) for n in ("Required", "NotRequired", "ReadOnly")) if q is not None
)


def _identity(value: Any) -> Any:
    return value


# ---- docstrings ----

_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Attributes|Fields|Keyword Args|Keyword Arguments|"
    r"Other Parameters|Returns?|Yields?|Raises|Examples?|Notes?|Warnings?|See Also|Todo|"
    r"References)\s*:\s*$",
    re.IGNORECASE,
)
_PARAM_SECTIONS = {"args", "arguments", "parameters", "params", "attributes", "fields",
                   "keyword args", "keyword arguments", "other parameters"}
_ENTRY = re.compile(r"^\**([A-Za-z_][A-Za-z0-9_]*)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str | None, dict[str, str]]:
    """The summary (first paragraph, lines joined) and the descriptions of a Google-style
    ``Args:`` (or ``Attributes:``) section, by name."""
    if not doc:
        return None, {}
    lines = inspect.cleandoc(doc).splitlines()
    summary_lines: list[str] = []
    for line in lines:
        if not line.strip() or _SECTION.match(line.strip()):
            break
        summary_lines.append(line.strip())
    summary = " ".join(summary_lines) or None

    params: dict[str, str] = {}
    i = 0
    while i < len(lines):
        header = _SECTION.match(lines[i].strip())
        i += 1
        if not header or header.group(1).lower() not in _PARAM_SECTIONS:
            continue
        # Entries are the lines at the indentation of the first one; deeper lines continue an
        # entry; anything else (a shallower line, another section, other text) ends the section.
        entry_indent = None
        current = None
        while i < len(lines):
            line = lines[i]
            if not line.strip():
                i += 1
                continue
            indent = _indent(line)
            if entry_indent is None:
                entry_indent = indent
            if indent < entry_indent:
                break
            if indent == entry_indent:
                entry = _ENTRY.match(line.strip())
                if not entry or _SECTION.match(line.strip()):
                    break
                current = entry.group(1)
                params[current] = entry.group(2).strip()
            elif current is not None:
                params[current] = (params[current] + " " + line.strip()).strip()
            i += 1
    return summary, params


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


# ---- schemas ----


def describe(hint: Any, where: str, stack: tuple = ()) -> tuple[dict[str, Any], Convert]:
    """The JSON Schema of ``hint`` and the function that turns a JSON value (already checked
    against that schema by the host) into the hinted type. ``where`` names the place for error
    messages."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)

    if origin is typing.Annotated:
        schema, convert = describe(args[0], where, stack)
        schema = dict(schema)
        for extra in hint.__metadata__:
            if isinstance(extra, str):
                schema["description"] = extra
            elif isinstance(extra, dict):
                schema.update(extra)
        return schema, convert
    if origin is not None and origin in _QUALIFIERS:
        return describe(args[0], where, stack)

    if hint is Any or hint is object:
        return {}, _identity
    if hint is None or hint is type(None):
        return {"type": "null"}, _check(lambda v: v is None, "null")
    if hint is bool:
        return {"type": "boolean"}, _check(lambda v: isinstance(v, bool), "a boolean")
    if hint is int:
        return {"type": "integer"}, _to_int
    if hint is float:
        return {"type": "number"}, _to_float
    if hint is str:
        return {"type": "string"}, _check(lambda v: isinstance(v, str), "a string")

    if origin is typing.Literal:
        values = list(args)
        for value in values:
            if not (value is None or isinstance(value, (str, int, float, bool))) or isinstance(value, enum.Enum):
                raise SchemaError(f"{where}: Literal values must be str, int, float, bool or None, not {value!r}")
        return _enum_schema(values), _one_of(values)

    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        values = [member.value for member in hint]
        for value in values:
            if not (value is None or isinstance(value, (str, int, float, bool))):
                raise SchemaError(
                    f"{where}: the values of the Enum {hint.__name__} must be str, int, float or bool, not {value!r}"
                )
        return _enum_schema(values), _to_enum(hint)

    if origin is typing.Union or origin is types.UnionType:
        members = [a for a in args if a is not type(None)]
        nullable = len(members) < len(args)
        described = [describe(m, where, stack) for m in members]
        if len(described) == 1:
            schema, convert = described[0]
        else:
            schema = {"anyOf": [s for s, _ in described]}
            convert = _first_fitting([c for _, c in described])
        if nullable:
            schema = _nullable(schema)
            convert = _or_none(convert)
        return schema, convert

    if hint in (list, tuple, set, frozenset) or origin in (
        list, tuple, set, frozenset, collections.abc.Sequence, collections.abc.Iterable,
        collections.abc.Collection, collections.abc.Set, collections.abc.MutableSequence,
    ):
        container = origin or hint
        make = {tuple: tuple, set: set, frozenset: frozenset, collections.abc.Set: frozenset}.get(container, list)
        schema = {"type": "array"}
        if make in (set, frozenset):
            schema["uniqueItems"] = True
        if not args:
            return schema, _sequence(_identity, make)
        if container is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            if args == ((),):  # tuple[()]
                return {"type": "array", "maxItems": 0}, _sequence(_identity, tuple)
            items = [describe(a, f"{where}[{i}]", stack) for i, a in enumerate(args)]
            schema.update(
                prefixItems=[s for s, _ in items], items=False, minItems=len(items), maxItems=len(items)
            )
            return schema, _fixed_tuple([c for _, c in items])
        item_schema, item_convert = describe(args[0], f"{where}[]", stack)
        schema["items"] = item_schema
        return schema, _sequence(item_convert, make)

    if hint is dict or origin in (dict, collections.abc.Mapping, collections.abc.MutableMapping):
        if not args:
            return {"type": "object"}, _check(lambda v: isinstance(v, dict), "an object")
        key, value = args
        if key is not str:
            raise SchemaError(f"{where}: JSON object keys are strings, so use dict[str, ...], not {_name(hint)}")
        value_schema, value_convert = describe(value, f"{where}{{}}", stack)
        return {"type": "object", "additionalProperties": value_schema}, _mapping(value_convert)

    if isinstance(hint, type) and typing.is_typeddict(hint):
        return _object(hint, where, stack, typeddict=True)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _object(hint, where, stack, typeddict=False)

    if isinstance(hint, (str, typing.ForwardRef)):
        raise SchemaError(f"{where}: the type hint {hint!r} is a string that could not be resolved")
    raise SchemaError(f"{where}: the SDK cannot express the type {_name(hint)} as JSON Schema (it supports {SUPPORTED})")


def _name(hint: Any) -> str:
    if isinstance(hint, type) and typing.get_origin(hint) is None:
        return f"{hint.__module__}.{hint.__qualname__}" if hint.__module__ != "builtins" else hint.__qualname__
    return repr(hint)


def _enum_schema(values: list) -> dict[str, Any]:
    schema: dict[str, Any] = {"enum": list(values)}
    kinds = {_json_type(v) for v in values}
    if len(kinds) == 1:
        schema = {"type": kinds.pop(), **schema}
    return schema


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string"


def _json_kind(value: Any) -> str:
    kind = _json_type(value)
    return "number" if kind == "integer" else kind


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if isinstance(kind, str) and kind != "null" and "const" not in schema:
        out = {**schema, "type": [kind, "null"]}
        if "enum" in out:
            out["enum"] = out["enum"] + [None]
        return out
    if schema == {}:
        return schema
    return {"anyOf": [schema, {"type": "null"}]}


def _object(cls: type, where: str, stack: tuple, typeddict: bool) -> tuple[dict[str, Any], Convert]:
    if cls in stack:
        raise SchemaError(f"{where}: the type {cls.__qualname__} refers to itself, which the SDK cannot express")
    stack = stack + (cls,)
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except Exception as e:
        raise SchemaError(f"{where}: cannot resolve the type hints of {cls.__qualname__}: {e}") from e
    _, docs = parse_docstring(cls.__doc__)
    properties: dict[str, Any] = {}
    required: list[str] = []
    converters: dict[str, Convert] = {}
    if typeddict:
        names = list(hints)
        required_keys = set(getattr(cls, "__required_keys__", names))
        for name in names:
            # With postponed annotations (`from __future__ import annotations`), TypedDict cannot
            # see Required/NotRequired when the class is made; the resolved hints can.
            qualifier = typing.get_origin(hints[name])
            if qualifier is getattr(typing, "NotRequired", None):
                required_keys.discard(name)
            elif qualifier is getattr(typing, "Required", None):
                required_keys.add(name)
    else:
        fields = [f for f in dataclasses.fields(cls) if f.init]
        names = [f.name for f in fields]
        by_name = {f.name: f for f in fields}
    for name in names:
        schema, convert = describe(hints[name], f"{where}.{name}", stack)
        schema = dict(schema)
        if name in docs and "description" not in schema:
            schema["description"] = docs[name]
        if typeddict:
            if name in required_keys:
                required.append(name)
        else:
            field = by_name[name]
            if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
                required.append(name)
            elif field.default is not dataclasses.MISSING:
                set_default(schema, field.default)
        properties[name] = schema
        converters[name] = convert
    schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    if typeddict:
        return schema, _typeddict(converters)
    return schema, _dataclass(cls, converters, required)


def set_default(schema: dict[str, Any], default: Any) -> None:
    """Records ``default`` in ``schema`` when it is JSON data."""
    try:
        schema["default"] = to_json(default)
    except (TypeError, ValueError):
        pass


# ---- converters ----


def _check(test: Callable[[Any], bool], expected: str) -> Convert:
    def convert(value: Any) -> Any:
        if not test(value):
            raise ArgumentError(f"expected {expected}, got {_shown(value)}")
        return value

    return convert


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _to_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ArgumentError(f"expected an integer, got {_shown(value)}")
    if isinstance(value, float):
        if not value.is_integer():
            raise ArgumentError(f"expected an integer, got {_shown(value)}")
        return int(value)
    return value


def _to_float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ArgumentError(f"expected a number, got {_shown(value)}")
    return float(value)


def _one_of(values: list) -> Convert:
    def convert(value: Any) -> Any:
        for allowed in values:
            if value == allowed and _json_kind(value) == _json_kind(allowed):
                return allowed
        raise ArgumentError(f"expected one of {values!r}, got {_shown(value)}")

    return convert


def _to_enum(cls: type[enum.Enum]) -> Convert:
    def convert(value: Any) -> Any:
        if isinstance(value, cls):
            return value
        for member in cls:
            if member.value == value and _json_kind(member.value) == _json_kind(value):
                return member
        raise ArgumentError(f"expected one of {[m.value for m in cls]!r}, got {_shown(value)}")

    return convert


def _or_none(inner: Convert) -> Convert:
    def convert(value: Any) -> Any:
        return None if value is None else inner(value)

    return convert


def _first_fitting(options: list[Convert]) -> Convert:
    def convert(value: Any) -> Any:
        reasons = []
        for option in options:
            try:
                return option(value)
            except ArgumentError as e:
                reasons.append(str(e))
        raise ArgumentError("fits none of the types: " + "; ".join(reasons))

    return convert


def _convert_elements(values: list[Any] | tuple[Any, ...], converters: list[Convert]) -> list[Any]:
    """Converts each element with its converter; an error names the element's index."""
    out = []
    # Callers pass one converter per element (the lengths are checked before).
    for i, (element, convert) in enumerate(zip(values, converters, strict=True)):
        try:
            out.append(convert(element))
        except ArgumentError as e:
            raise ArgumentError(f"[{i}]: {e}") from None
    return out


def _sequence(item: Convert, make: type) -> Convert:
    def convert(value: Any) -> Any:
        if not isinstance(value, (list, tuple)):
            raise ArgumentError(f"expected an array, got {_shown(value)}")
        return make(_convert_elements(value, [item] * len(value)))

    return convert


def _fixed_tuple(items: list[Convert]) -> Convert:
    def convert(value: Any) -> Any:
        if not isinstance(value, (list, tuple)) or len(value) != len(items):
            raise ArgumentError(f"expected an array of {len(items)} items, got {_shown(value)}")
        return tuple(_convert_elements(value, items))

    return convert


def _mapping(item: Convert) -> Convert:
    def convert(value: Any) -> Any:
        if not isinstance(value, dict):
            raise ArgumentError(f"expected an object, got {_shown(value)}")
        out = {}
        for key, element in value.items():
            try:
                out[key] = item(element)
            except ArgumentError as e:
                raise ArgumentError(f".{key}: {e}") from None
        return out

    return convert


def _typeddict(fields: dict[str, Convert]) -> Convert:
    def convert(value: Any) -> Any:
        if not isinstance(value, dict):
            raise ArgumentError(f"expected an object, got {_shown(value)}")
        out = dict(value)
        for key, field_convert in fields.items():
            if key in value:
                try:
                    out[key] = field_convert(value[key])
                except ArgumentError as e:
                    raise ArgumentError(f".{key}: {e}") from None
        return out

    return convert


def _dataclass(cls: type, fields: dict[str, Convert], required: list[str]) -> Convert:
    def convert(value: Any) -> Any:
        if isinstance(value, cls):
            return value
        if not isinstance(value, dict):
            raise ArgumentError(f"expected an object, got {_shown(value)}")
        missing = [name for name in required if name not in value]
        if missing:
            raise ArgumentError("missing " + ", ".join(f"`{m}`" for m in missing))
        kwargs = {}
        for key, field_convert in fields.items():
            if key in value:
                try:
                    kwargs[key] = field_convert(value[key])
                except ArgumentError as e:
                    raise ArgumentError(f".{key}: {e}") from None
        return cls(**kwargs)

    return convert
