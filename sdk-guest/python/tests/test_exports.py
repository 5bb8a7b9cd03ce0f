"""The export classes and the translation to and from the WIT bindings, on plain CPython.

The bindings are generated with componentize-py (`componentize-py bindings`), so these tests are
skipped where it is not installed; the rest of the suite does not need it.
"""

import importlib.util
import json
import subprocess
import sys

import pytest

import palisade_sdk as palisade
from palisade_sdk import AwaitingAnswer, Plugin, build, exports, host

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("componentize_py") is None, reason="componentize-py is not installed"
)


@pytest.fixture(scope="module")
def wit(tmp_path_factory):
    out = tmp_path_factory.mktemp("bindings")
    wit_dir = build.find_wit(None)
    subprocess.run(
        [sys.executable, "-c", build._RUNNER, *build.extend_world(wit_dir, "plugin", out / "wit"), "bindings", str(out)],
        check=True,
        capture_output=True,
    )
    sys.path.insert(0, str(out))
    try:
        import componentize_py_types
        from wit_world.exports import completion, prompts, tools
        from wit_world.imports import host as raw_host
        from wit_world.imports import types

        yield {"types": types, "tools": tools, "prompts": prompts, "completion": completion,
               "host": raw_host, "Err": componentize_py_types.Err, "Ok": componentize_py_types.Ok}
    finally:
        sys.path.remove(str(out))


@pytest.fixture
def served():
    p = Plugin()

    @p.tool(read_only=True, title="Greeter")
    def greet(name: str) -> str:
        return f"Hello, {name}!"

    @p.tool
    def crash() -> dict:
        return {"x": 1 // 0}

    @p.tool(task_support="optional")
    def crawl() -> str:
        return "crawled"

    @p.tool
    def picture() -> list:
        return [palisade.image(b"\x89PNG", "image/png"), palisade.embedded_resource("a://b", b"\x01", "x/y")]

    @p.resource("motd://today", mime_type="text/plain", icons=[palisade.Icon("https://x/i.png", sizes=["48x48"], theme="dark")])
    def motd() -> str:
        return "Be kind."

    @p.resource_template("notes://{name}", complete={"name": ["alpha", "beta"]})
    def note(name: str) -> str:
        raise palisade.NotFound(f"no note `{name}`")

    @p.prompt(complete={"style": ["short", "long"]})
    def summarize(path: str, style: str = "short") -> list:
        return [palisade.user(f"Summarize {path}"), palisade.assistant(style)]

    @p.resource_lister
    def broken():
        raise RuntimeError("lister failed")

    exports.serve(p)
    yield p
    exports._served = None


def test_tools(wit, served, capsys):
    (listed_greet, _, listed_crawl, _) = exports.Tools().list_tools()
    assert isinstance(listed_greet, wit["tools"].Tool)
    assert listed_greet.task_support == wit["tools"].TaskSupport.FORBIDDEN
    assert listed_crawl.task_support == wit["tools"].TaskSupport.OPTIONAL
    assert listed_greet.title == "Greeter" and listed_greet.annotations.read_only_hint is True
    assert json.loads(listed_greet.input_schema)["required"] == ["name"]
    result = exports.Tools().call_tool("greet", '{"name": "Ada"}')
    assert result.content == [wit["types"].ContentBlock_Text(wit["types"].TextContent("Hello, Ada!", None, None))]
    assert result.is_error is False and result.structured_content is None
    media = exports.Tools().call_tool("picture", "{}").content
    assert isinstance(media[0], wit["types"].ContentBlock_Image) and media[0].value.data == b"\x89PNG"
    assert media[1].value.resource.body == wit["types"].ResourceBody_Blob(b"\x01")
    for name, code in (("nope", wit["types"].ErrorCode.NOT_FOUND), ("crash", wit["types"].ErrorCode.INTERNAL)):
        with pytest.raises(wit["Err"]) as caught:
            exports.Tools().call_tool(name, "{}")
        assert caught.value.value.code == code
    assert caught.value.value.message.startswith("ZeroDivisionError: ")
    assert "Traceback" in capsys.readouterr().err


def test_prepare_binds_the_call_path_and_leaves_the_plugin_alone(wit, served):
    from palisade_sdk import _wit

    _wit._bound = None
    exports.prepare()
    bound = _wit._bound
    assert bound is not None and bound.tools is wit["tools"] and bound.err is wit["Err"]
    assert bound.log_levels["warning"] == wit["host"].LogLevel.WARNING
    # The warm-up call runs on a plugin of its own: the served plugin gains no tool.
    assert [t.name for t in exports.Tools().list_tools()] == ["greet", "crash", "crawl", "picture"]
    exports.prepare()
    assert _wit._bound is bound, "bound once"


def test_prepare_in_a_world_without_tools_only_binds(wit, monkeypatch):
    from palisade_sdk import _wit

    real = _wit._module
    monkeypatch.setattr(_wit, "_module", lambda name: None if name == "wit_world.exports.tools" else real(name))
    monkeypatch.setattr(_wit, "_bound", None)
    exports.prepare()  # nothing to warm, and no error: a prompt pack builds
    assert _wit._bound is not None and _wit._bound.tools is None
    assert _wit._bound.host is wit["host"]


def test_resources(wit, served, capsys):
    listed = exports.Resources().list_resources()  # the broken lister is left out, with a traceback
    assert [r.uri for r in listed] == ["motd://today"]
    assert listed[0].icons == [wit["types"].Icon("https://x/i.png", None, ["48x48"], wit["types"].IconTheme.DARK)]
    assert "lister failed" in capsys.readouterr().err
    (contents,) = exports.Resources().read_resource("motd://today")
    assert (contents.body, contents.mime_type) == (wit["types"].ResourceBody_Text("Be kind."), "text/plain")
    with pytest.raises(wit["Err"]) as caught:
        exports.Resources().read_resource("notes://x")
    assert (caught.value.value.code, caught.value.value.message) == (wit["types"].ErrorCode.NOT_FOUND, "no note `x`")
    assert [t.uri_template for t in exports.Resources().list_resource_templates()] == ["notes://{name}"]


def test_prompts_and_completion(wit, served):
    (prompt,) = exports.Prompts().list_prompts()
    assert [(a.name, a.required) for a in prompt.arguments] == [("path", True), ("style", False)]
    result = exports.Prompts().get_prompt("summarize", [("path", "a.txt")])
    assert [m.role for m in result.messages] == [wit["types"].Role.USER, wit["types"].Role.ASSISTANT]
    refs = exports.Completion().completable()
    assert refs == [wit["completion"].CompletionRef_Prompt("summarize"), wit["completion"].CompletionRef_ResourceTemplate("notes://{name}")]
    done = exports.Completion().complete(refs[0], "style", "l", [("path", "a.txt")])
    assert done == wit["completion"].CompletionResult(["long"], 1, False)
    with pytest.raises(wit["Err"]) as caught:
        exports.Completion().complete(refs[1], "nope", "", [])
    assert caught.value.value.code == wit["types"].ErrorCode.INVALID_PARAMS


def test_host_calls_translate(wit, monkeypatch):
    raw = wit["host"]
    calls = []
    monkeypatch.setattr(host, "inside_component", lambda: True)
    monkeypatch.setattr(raw, "log", lambda level, message: calls.append((level, message)))

    def fake_ask(requests):
        calls.append(requests)
        elicit = raw.InputResponse_Elicit(raw.ElicitationResponse(raw.ElicitationAction.ACCEPT, '{"name": "Ada"}'))
        sampled = raw.InputResponse_Sample(
            raw.SamplingResponse(wit["types"].Role.ASSISTANT, [wit["types"].ContentBlock_Text(wit["types"].TextContent("hi", None, None))], "m", None, "{}")
        )
        return [
            ("name", wit["Ok"](elicit)),
            ("summary", wit["Ok"](sampled)),
            ("roots", wit["Ok"](raw.InputResponse_ListRoots([raw.ClientRoot("file:///p", None)]))),
            ("later", wit["Err"](raw.AskError_AwaitingAnswer())),
        ]

    monkeypatch.setattr(raw, "ask", fake_ask)
    host.log("notice", "hello")
    answers = host.ask(
        {
            "name": host.form("Name?", {"type": "object"}),
            "summary": host.sample("Say hi", max_tokens=5),
            "roots": host.client_roots(),
            "later": host.url("Sign in", "https://example.com", "e1"),
        }
    )
    assert calls[0] == (raw.LogLevel.NOTICE, "hello")
    asked = dict(calls[1])
    assert asked["name"] == raw.InputRequest_Elicit(raw.ElicitationRequest_Form(raw.FormElicitation("Name?", '{"type":"object"}')))
    assert asked["summary"].value.max_tokens == 5
    assert asked["roots"] == raw.InputRequest_ListRoots()
    assert answers.elicitation("name").field("name") == "Ada"
    assert answers.sampling("summary").text == "hi"
    assert answers.roots("roots")[0].uri == "file:///p"
    assert answers.awaiting and isinstance(answers["later"], AwaitingAnswer)
