"""Resources, templates, listers, prompts and completions."""

from typing import Annotated, Literal, Optional

import pytest

import palisade_sdk as palisade
from palisade_sdk import ErrorCode, Plugin, PluginError, ResourceContents, ResourceInfo


def error_of(call, *args):
    with pytest.raises(PluginError) as caught:
        call(*args)
    return caught.value


@pytest.fixture
def plugin():
    p = Plugin()

    @p.resource("motd://today", mime_type="text/plain")
    def motd() -> str:
        """Message of the day."""
        return "Be kind."

    @p.resource("bin://blob")
    def blob() -> bytes:
        return b"\x00\x01"

    @p.resource("json://config")
    def config() -> dict:
        return {"debug": True}

    @p.resource("made://by-hand", mime_type="text/plain")
    def by_hand(uri: str):
        return [ResourceContents(uri, "{}", "application/json"), ResourceContents(uri, "plain")]

    @p.resource("gone://away")
    def gone():
        return None

    @p.resource_template("notes://{name}", mime_type="text/markdown", complete={"name": ["alpha", "Beta", "gamma"]})
    def note(name: str, uri: str) -> str:
        if name == "missing":
            raise palisade.NotFound(f"no note `{name}`")
        if name == "broken":
            raise RuntimeError("disk on fire")
        return f"{uri} is {name}"

    @p.resource_template("file:///{+path}", complete={"path": lambda typed, context: [typed + "x", str(context)]})
    def file(**variables) -> bytes:
        return variables["path"].encode()

    @p.resource_lister
    def listed():
        return [
            ResourceInfo("motd://today", "duplicate"),
            ResourceInfo("notes://b", "b"),
            ResourceInfo("notes://a", "a", mime_type="text/markdown"),
        ]

    @p.prompt(complete={"language": ["Rust", "Ruby", "Python"]})
    def review(code: str, language: Optional[str] = None) -> str:
        """Ask for a code review

        Args:
            code: The code to review.
            language: Its programming language.
        """
        return f"Review this {language or 'unknown'} code: {code}"

    @p.prompt(name="chat", description="A conversation")
    def conversation(mood: Literal["happy", "sad"], topic: Annotated[str, "What about"] = "life"):
        return [f"Talk about {topic}", palisade.assistant(f"A {mood} answer:")]

    @p.prompt
    def crashing(x: str) -> str:
        raise KeyError(x)

    return p


def text_of(contents):
    assert len(contents) == 1
    return contents[0].body


def test_fixed_resources(plugin):
    (motd,) = plugin.read_resource("motd://today")
    assert (motd.uri, motd.body, motd.mime_type) == ("motd://today", "Be kind.", "text/plain")
    assert plugin.resources["motd://today"].info.description == "Message of the day."
    (blob,) = plugin.read_resource("bin://blob")
    assert blob.blob == b"\x00\x01" and blob.text is None
    (config,) = plugin.read_resource("json://config")
    assert (config.body, config.mime_type) == ('{"debug":true}', "application/json")
    made = plugin.read_resource("made://by-hand")
    assert [(c.body, c.mime_type) for c in made] == [("{}", "application/json"), ("plain", "text/plain")]
    assert error_of(plugin.read_resource, "gone://away").code is ErrorCode.NOT_FOUND


def test_templates_match_and_decode(plugin):
    (contents,) = plugin.read_resource("notes://my%20note")
    assert contents.body == "notes://my%20note is my note"
    assert contents.mime_type == "text/markdown"
    assert text_of(plugin.read_resource("file:///a/b.txt")) == b"a/b.txt"
    missing = error_of(plugin.read_resource, "notes://missing")
    assert (missing.code, missing.message) == (ErrorCode.NOT_FOUND, "no note `missing`")
    broken = error_of(plugin.read_resource, "notes://broken")
    assert (broken.code, broken.message) == (ErrorCode.INTERNAL, "RuntimeError: disk on fire")
    unknown = error_of(plugin.read_resource, "nothing://here")
    assert (unknown.code, unknown.message) == (ErrorCode.NOT_FOUND, "this plugin has no resource `nothing://here`")


def test_listing_adds_listed_resources_without_duplicates(plugin):
    assert [r.uri for r in plugin.list_resources()] == [
        "motd://today", "bin://blob", "json://config", "made://by-hand", "gone://away", "notes://b", "notes://a",
    ]
    assert list(plugin.resource_templates) == ["notes://{name}", "file:///{+path}"]


def test_template_definition_mistakes():
    p = Plugin()
    with pytest.raises(ValueError, match=r"resource template `x://\{\?q\}`"):
        p.resource_template("x://{?q}")
    with pytest.raises(TypeError, match=r"no parameter for the variable\(s\) `b`"):
        p.resource_template("x://{a}/{b}")(lambda a: "")
    with pytest.raises(TypeError, match="parameter `other` is not one of the template's variables"):
        p.resource_template("x://{a}")(lambda a, other: "")
    with pytest.raises(ValueError, match="completes `nmae`, which is not one of its variables"):
        p.resource_template("x://{name}", complete={"nmae": []})(lambda name: "")

    def typed(n: int) -> str:
        return ""

    with pytest.raises(TypeError, match="template variables are strings"):
        p.resource_template("y://{n}")(typed)
    p.resource("a://b")(lambda: "")
    with pytest.raises(ValueError, match="two resources have the URI `a://b`"):
        p.resource("a://b")
    with pytest.raises(TypeError, match="takes no arguments"):
        p.resource("c://d")(lambda x: "")


def test_prompts_fill_in_messages(plugin):
    result = plugin.get_prompt("review", {"code": "x = 1"})
    ((role, content),) = [(m.role, m.content) for m in result.messages]
    assert role == "user" and content.text == "Review this unknown code: x = 1"
    chat = plugin.get_prompt("chat", {"mood": "happy"})
    assert [(m.role, m.content.text) for m in chat.messages] == [
        ("user", "Talk about life"),
        ("assistant", "A happy answer:"),
    ]


def test_prompt_listing(plugin):
    review = plugin.prompts["review"]
    assert review.description == "Ask for a code review"
    assert [(a.name, a.description, a.required) for a in review.arguments] == [
        ("code", "The code to review.", True),
        ("language", "Its programming language.", False),
    ]
    chat = plugin.prompts["chat"]
    assert chat.description == "A conversation"
    assert [(a.name, a.description, a.required) for a in chat.arguments] == [
        ("mood", None, True),
        ("topic", "What about", False),
    ]


def test_prompt_errors(plugin):
    missing = error_of(plugin.get_prompt, "review", {})
    assert (missing.code, missing.message) == (ErrorCode.INVALID_PARAMS, "the prompt `review` needs the argument(s) `code`")
    wrong = error_of(plugin.get_prompt, "chat", {"mood": "angry"})
    assert wrong.code is ErrorCode.INVALID_PARAMS and "expected one of ['happy', 'sad']" in wrong.message
    assert error_of(plugin.get_prompt, "nope", {}).code is ErrorCode.NOT_FOUND
    crashed = error_of(plugin.get_prompt, "crashing", {"x": "k"})
    assert (crashed.code, crashed.message) == (ErrorCode.INTERNAL, "KeyError: 'k'")


def test_prompt_definition_mistakes():
    p = Plugin()
    p.prompt(name="n")(lambda count: "")  # unannotated arguments are strings

    def numbers(count: int) -> str:
        return ""

    with pytest.raises(TypeError, match="prompt `numbers`: argument `count`: prompt arguments are strings"):
        p.prompt(numbers)
    with pytest.raises(ValueError, match="completes `lang`, which is not one of its arguments"):
        p.prompt(name="p", complete={"lang": []})(lambda code: "")


def test_completions(plugin):
    done = plugin.complete_prompt("review", "language", "ru", {"code": "x"})
    assert (done.values, done.total, done.has_more) == (["Rust", "Ruby"], 2, False)
    assert plugin.complete_prompt("review", "code", "").values == []  # declared, no completer
    assert plugin.complete_prompt("chat", "mood", "S").values == ["sad"]  # from the Literal
    assert plugin.complete_template("notes://{name}", "name", "b").values == ["Beta"]
    assert plugin.complete_template("file:///{+path}", "path", "dir/", {"k": "v"}).values == [
        "dir/x",
        "{'k': 'v'}",
    ]
    assert error_of(plugin.complete_prompt, "review", "zzz", "").code is ErrorCode.INVALID_PARAMS
    assert error_of(plugin.complete_prompt, "nope", "a", "").code is ErrorCode.NOT_FOUND
    assert error_of(plugin.complete_template, "zz://{x}", "x", "").code is ErrorCode.NOT_FOUND
    assert error_of(plugin.complete_template, "notes://{name}", "other", "").code is ErrorCode.INVALID_PARAMS
    assert plugin.completable() == [
        ("prompt", "review"),
        ("prompt", "chat"),
        ("resource-template", "notes://{name}"),
        ("resource-template", "file:///{+path}"),
    ]


def test_long_completion_lists_are_cut():
    p = Plugin()

    @p.prompt(complete={"n": lambda typed: (f"{typed}{i}" for i in range(150))})
    def numbered(n: str) -> str:
        return n

    done = p.complete_prompt("numbered", "n", "x")
    assert len(done.values) == 100 and done.values[0] == "x0"
    assert (done.total, done.has_more) == (150, True)


def test_prefix_matches_ignores_case():
    assert palisade.prefix_matches("ja", ["Go", "JavaScript", "Java"]) == ["JavaScript", "Java"]
    assert palisade.prefix_matches("", ["a", "b"]) == ["a", "b"]
