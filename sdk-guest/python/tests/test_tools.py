"""Calling tools: argument conversion, results from plain values, errors."""

import enum
from dataclasses import dataclass
from typing import Optional, TypedDict

import pytest

import palisade_sdk as palisade
from palisade_sdk import ErrorCode, Plugin, PluginError, ToolError, ToolResult


class Shape(enum.Enum):
    CIRCLE = "circle"
    SQUARE = "square"


@dataclass
class Item:
    name: str
    qty: int = 1


@dataclass
class Receipt:
    total: int
    shape: Shape


class Counts(TypedDict):
    n: int


@pytest.fixture
def plugin():
    p = Plugin()

    @p.tool
    def order(items: list[Item], shape: Shape, note: Optional[str] = None) -> Receipt:
        assert all(isinstance(i, Item) for i in items) and isinstance(shape, Shape)
        return Receipt(sum(i.qty for i in items), shape)

    @p.tool
    def echo(value: float) -> float:
        return value

    @p.tool
    def nothing() -> None:
        return None

    @p.tool
    def as_list() -> list:
        return [1, "two", None]

    @p.tool
    def as_bool() -> bool:
        return True

    @p.tool
    def counts() -> Counts:
        return {"n": 3}

    @p.tool
    def blocks() -> list:
        return [palisade.text("chart:"), palisade.image(b"\x89PNG", "image/png"), palisade.resource_link("a://b", "b")]

    @p.tool
    def raw_bytes() -> bytes:
        return b"\x00"

    @p.tool
    def refuse(reason: str) -> str:
        raise ToolError(f"no: {reason}")

    @p.tool
    def crash(x: int = 0) -> str:
        return str(1 // x)

    @p.tool
    def explicit() -> ToolResult:
        return ToolResult([palisade.text("partial")], structured_content={"ok": False}, is_error=True, meta={"k": 1})

    @p.tool
    def declared_error() -> str:
        raise palisade.InvalidParams("bad combination", data={"field": "x"})

    return p


def test_dicts_become_dataclasses_and_enums(plugin):
    result = plugin.call_tool("order", {"items": [{"name": "a", "qty": 2}, {"name": "b"}], "shape": "circle"})
    assert not result.is_error
    assert result.structured_content == {"total": 3, "shape": "circle"}
    assert result.text() == '{"total":3,"shape":"circle"}'


def test_arguments_as_json_text(plugin):
    assert plugin.call_tool("echo", '{"value": 2}').text() == "2.0"
    assert plugin.call_tool("nothing", "").content == []
    assert plugin.call_tool("nothing", None).content == []


def test_bad_arguments_are_error_results(plugin):
    missing = plugin.call_tool("order", {"shape": "circle"})
    assert missing.is_error and missing.text() == "invalid arguments: missing `items`"
    wrong = plugin.call_tool("order", {"items": [{"name": 1}], "shape": "circle"})
    assert wrong.is_error and wrong.text() == "invalid arguments: `items`: [0]: .name: expected a string, got 1"
    enum_value = plugin.call_tool("order", {"items": [], "shape": "triangle"})
    assert enum_value.is_error and "expected one of ['circle', 'square']" in enum_value.text()
    not_json = plugin.call_tool("echo", "{")
    assert not_json.is_error and not_json.text().startswith("invalid arguments: not valid JSON")
    not_object = plugin.call_tool("echo", "[1]")
    assert not_object.is_error and not_object.text() == "invalid arguments: expected a JSON object"


def test_plain_values_become_results(plugin):
    assert plugin.call_tool("as_list").text() == '[1,"two",null]'
    assert plugin.call_tool("as_list").structured_content is None
    assert plugin.call_tool("as_bool").text() == "true"
    assert plugin.call_tool("counts").structured_content == {"n": 3}
    blocks = plugin.call_tool("blocks").content
    assert [type(b).__name__ for b in blocks] == ["TextContent", "ImageContent", "ResourceLink"]
    explicit = plugin.call_tool("explicit")
    assert explicit.is_error and explicit.meta == {"k": 1}


def test_tool_error_is_for_the_model(plugin):
    result = plugin.call_tool("refuse", {"reason": "busy"})
    assert result.is_error
    assert result.text() == "no: busy"


def test_unexpected_exception_is_internal_with_a_traceback(plugin, capsys):
    with pytest.raises(PluginError) as caught:
        plugin.call_tool("crash", {"x": 0})
    assert caught.value.code is ErrorCode.INTERNAL
    assert caught.value.message.startswith("ZeroDivisionError: ")  # the wording varies by version
    err = capsys.readouterr().err
    assert "tool `crash` failed" in err and "Traceback" in err and "1 // x" in err


def test_bytes_without_a_mime_type_are_refused(plugin, capsys):
    with pytest.raises(PluginError, match="wrap them in palisade_sdk.image"):
        plugin.call_tool("raw_bytes")


def test_plugin_errors_pass_through(plugin):
    with pytest.raises(PluginError) as caught:
        plugin.call_tool("declared_error")
    assert caught.value.code is ErrorCode.INVALID_PARAMS and caught.value.data == {"field": "x"}


def test_unknown_tool_is_not_found(plugin):
    with pytest.raises(PluginError) as caught:
        plugin.call_tool("nope", {})
    assert caught.value.code is ErrorCode.NOT_FOUND
    assert caught.value.message == "this plugin has no tool named `nope`"


def test_decorators_return_the_function():
    p = Plugin()

    def add(a: int, b: int) -> int:
        return a + b

    assert p.tool(add) is add
    assert p.tool(name="plus")(add) is add
    assert add(1, 2) == 3
    assert list(p.tools) == ["add", "plus"]


@pytest.mark.parametrize("name", ["", "has space", "dot.ted", "x" * 65, "ünï"])
def test_bad_names_are_refused(name):
    def f() -> str:
        return ""

    with pytest.raises(ValueError, match="1 to 64 characters of A-Z a-z 0-9 _ -"):
        Plugin().tool(name=name)(f)


def test_duplicate_names_are_refused():
    p = Plugin()

    def f() -> str:
        return ""

    p.tool(name="same")(f)
    with pytest.raises(ValueError, match="two tools are named `same`"):
        p.tool(name="same")(f)
    assert len("x" * 64) == 64 and Plugin().tool(name="x" * 64)(f) is f


def test_task_support_is_one_of_three():
    p = Plugin()

    def crawl() -> str:
        return ""

    with pytest.raises(ValueError, match="task_support must be one of forbidden, optional, required"):
        p.tool(task_support="sometimes")(crawl)
    p.tool(task_support="required")(crawl)
    assert p.tools["crawl"].task_support == "required"


def test_a_view_is_a_ui_resource_of_its_mime_type_and_a_tool_names_it():
    p = Plugin()

    @p.ui_view("ui://demo/chart", csp={"connectDomains": ["https://api.example.com"]},
               permissions=["clipboardWrite"], prefers_border=True)
    def chart() -> str:
        return "<!DOCTYPE html><p>chart</p>"

    @p.tool(ui="ui://demo/chart")
    def plot() -> str:
        return "plotted"

    @p.tool(ui="ui://demo/chart", ui_visibility=("app",))
    def refresh() -> str:
        return "fresh"

    ui = {"csp": {"connectDomains": ["https://api.example.com"]}, "permissions": {"clipboardWrite": {}},
          "prefersBorder": True}
    view = p.resources["ui://demo/chart"]
    assert view.info.mime_type == "text/html;profile=mcp-app" and view.info.meta == {"ui": ui}
    (contents,) = view.read()
    assert contents.body == "<!DOCTYPE html><p>chart</p>"
    assert contents.mime_type == "text/html;profile=mcp-app" and contents.meta == {"ui": ui}
    assert p.tools["plot"].meta == {"ui": {"resourceUri": "ui://demo/chart", "visibility": ["model", "app"]},
                                    "ui/resourceUri": "ui://demo/chart"}
    assert p.tools["refresh"].meta["ui"]["visibility"] == ["app"]
    for bad, why in (({"uri": "https://x/y"}, "ui://AUTHORITY/PATH"),
                     ({"uri": "ui://x/y", "csp": {"scriptDomains": []}}, "csp key 'scriptDomains'"),
                     ({"uri": "ui://x/y", "permissions": ["teleport"]}, "permission 'teleport'")):
        uri = bad.pop("uri")
        with pytest.raises(ValueError, match=why):
            Plugin().ui_view(uri, **bad)
    with pytest.raises(ValueError, match="ui_visibility"):
        Plugin().tool(ui="ui://x/y", ui_visibility=("everyone",))(plot)
