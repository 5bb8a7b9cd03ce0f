"""Input and output schemas derived from type hints and docstrings."""

from __future__ import annotations

import datetime
import enum
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, NotRequired, Optional, TypedDict

import pytest

from palisade_sdk import Plugin, SchemaError
from palisade_sdk._schema import parse_docstring


def schema_of(fn, **options):
    plugin = Plugin()
    plugin.tool(**options)(fn)
    (tool,) = plugin.tools.values()
    return tool


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclass
class Point:
    """A point.

    Attributes:
        x: Across.
        y: Up.
    """

    x: float
    y: float = 0.0
    tags: list[str] = field(default_factory=list)


class Options(TypedDict):
    depth: int
    label: NotRequired[str]


class Stats(TypedDict):
    """Counts.

    Attributes:
        lines: How many lines.
    """

    lines: int
    words: int


def test_primitives_required_and_defaults():
    def f(name: str, count: int, ratio: float, on: bool, maybe: Optional[str] = None, n: int = 3):
        pass

    schema = schema_of(f).input_schema
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["type"] == "object"
    props = schema["properties"]
    assert props["name"] == {"type": "string"}
    assert props["count"] == {"type": "integer"}
    assert props["ratio"] == {"type": "number"}
    assert props["on"] == {"type": "boolean"}
    assert props["maybe"] == {"type": ["string", "null"], "default": None}
    assert props["n"] == {"type": "integer", "default": 3}
    assert schema["required"] == ["name", "count", "ratio", "on"]


def test_no_parameters_is_an_empty_object():
    def ping() -> str:
        return "pong"

    schema = schema_of(ping).input_schema
    assert schema["properties"] == {}
    assert "required" not in schema


def test_containers_literals_enums():
    def f(
        tags: list[str],
        scores: dict[str, float],
        pair: tuple[int, str],
        many: tuple[int, ...],
        unique: set[str],
        mode: Literal["fast", "slow"],
        color: Color,
        level: Level,
        either: int | str,
        color_or_none: Color | None = None,
        anything: Any = None,
    ):
        pass

    props = schema_of(f).input_schema["properties"]
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["scores"] == {"type": "object", "additionalProperties": {"type": "number"}}
    assert props["pair"]["prefixItems"] == [{"type": "integer"}, {"type": "string"}]
    assert props["pair"]["minItems"] == props["pair"]["maxItems"] == 2
    assert props["many"] == {"type": "array", "items": {"type": "integer"}}
    assert props["unique"] == {"type": "array", "uniqueItems": True, "items": {"type": "string"}}
    assert props["mode"] == {"type": "string", "enum": ["fast", "slow"]}
    assert props["color"] == {"type": "string", "enum": ["red", "blue"]}
    assert props["level"] == {"type": "integer", "enum": [1, 2]}
    assert props["either"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert props["color_or_none"] == {"type": ["string", "null"], "enum": ["red", "blue", None], "default": None}
    assert props["anything"] == {"default": None}


def test_dataclasses_and_typeddicts():
    def f(where: Point, options: Options):
        pass

    props = schema_of(f).input_schema["properties"]
    assert props["where"] == {
        "type": "object",
        "properties": {
            "x": {"type": "number", "description": "Across."},
            "y": {"type": "number", "description": "Up.", "default": 0.0},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["x"],
    }
    assert props["options"] == {
        "type": "object",
        "properties": {"depth": {"type": "integer"}, "label": {"type": "string"}},
        "required": ["depth"],
    }


def test_descriptions_from_docstring_and_annotated():
    def f(
        name: str,
        times: Annotated[int, "How often.", {"minimum": 1}] = 1,
        loud: bool = False,
    ) -> str:
        """Say hello
        to someone.

        More detail that is not part of the description.

        Args:
            name (str): Who to greet,
                over two lines.
            times: Ignored: Annotated wins.
            loud: Whether to shout.

        Returns:
            The greeting.
        """

    tool = schema_of(f)
    assert tool.description == "Say hello to someone."
    props = tool.input_schema["properties"]
    assert props["name"]["description"] == "Who to greet, over two lines."
    assert props["times"] == {"type": "integer", "description": "How often.", "minimum": 1, "default": 1}
    assert props["loud"]["description"] == "Whether to shout."


def test_explicit_options_win():
    def f(x: int) -> str:
        """Docstring summary."""

    tool = schema_of(f, name="renamed", description="Given", title="A title", read_only=True, open_world=False)
    assert (tool.name, tool.description, tool.title) == ("renamed", "Given", "A title")
    assert (tool.read_only, tool.destructive, tool.idempotent, tool.open_world) == (True, None, None, False)


def test_parse_docstring_edge_cases():
    assert parse_docstring(None) == (None, {})
    assert parse_docstring("Args:\n    x: An x.") == (None, {"x": "An x."})
    summary, params = parse_docstring(
        """Summary.

        Parameters:
            *args: Ignored star.
            **kwargs: Stars stripped.
            count (int, optional): A count.
        Raises:
            ValueError: not a parameter.
        """
    )
    assert summary == "Summary."
    assert params == {"args": "Ignored star.", "kwargs": "Stars stripped.", "count": "A count."}


def test_output_schema_from_typeddict_or_dataclass():
    def count(path: str) -> Stats:
        return {"lines": 1, "words": 2}

    def where() -> Point:
        return Point(1.0)

    def plain() -> int:
        return 1

    out = schema_of(count).output_schema
    assert out["type"] == "object"
    assert out["properties"]["lines"] == {"type": "integer", "description": "How many lines."}
    assert out["required"] == ["lines", "words"]
    assert schema_of(where).output_schema["properties"]["x"]["type"] == "number"
    assert schema_of(plain).output_schema is None
    assert schema_of(plain, output_schema={"type": "object", "properties": {}}).output_schema == {
        "type": "object",
        "properties": {},
    }
    assert schema_of(plain, output_schema=Stats).output_schema["required"] == ["lines", "words"]


def test_unsupported_type_names_the_tool_and_the_parameter():
    def when(at: datetime.datetime) -> str:
        return ""

    with pytest.raises(SchemaError) as caught:
        schema_of(when)
    message = str(caught.value)
    assert message.startswith("tool `when`: parameter `at`: the SDK cannot express the type datetime.datetime")

    def nested(items: list[dict[int, str]]) -> str:
        return ""

    with pytest.raises(SchemaError, match=r"tool `nested`: parameter `items`\[\]: JSON object keys are strings"):
        schema_of(nested)


def test_missing_hint_and_star_parameters_are_refused():
    def untyped(x) -> str:
        return ""

    with pytest.raises(SchemaError, match="tool `untyped`: parameter `x` has no type hint"):
        schema_of(untyped)

    def star(*xs: int) -> str:
        return ""

    with pytest.raises(TypeError, match=r"tool `star`: `\*xs`"):
        schema_of(star)

    def keywords(**kw: int) -> str:
        return ""

    with pytest.raises(TypeError, match=r"tool `keywords`: `\*\*kw`"):
        schema_of(keywords)

    async def later(x: int) -> str:
        return ""

    with pytest.raises(TypeError, match="async functions are not supported"):
        schema_of(later)


@dataclass
class Node:
    value: int
    children: list["Node"]


def test_recursive_types_are_refused():
    def tree(root: Node) -> str:
        return ""

    with pytest.raises(SchemaError, match="refers to itself"):
        schema_of(tree)


def test_unresolvable_hints_are_reported():
    def f(x: "NoSuchType") -> str:  # noqa: F821
        return ""

    with pytest.raises(SchemaError, match="tool `f`: cannot resolve its type hints"):
        schema_of(f)
