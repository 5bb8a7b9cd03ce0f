"""The example plugin plugins/textkit-py, tested the way a plugin author would: its functions
directly, and the plugin through the SDK's dispatch, on plain CPython."""

import importlib.util
import sys
from pathlib import Path

import pytest

import palisade_sdk as palisade
from palisade_sdk import ErrorCode, PluginError

APP = Path(__file__).resolve().parents[3] / "plugins" / "textkit-py" / "app.py"


@pytest.fixture(scope="module")
def textkit():
    if not APP.is_file():
        pytest.skip("plugins/textkit-py is not next to the SDK")
    saved = palisade.plugin.__dict__.copy()
    for registry in ("tools", "resources", "resource_templates", "prompts"):
        setattr(palisade.plugin, registry, {})
    spec = importlib.util.spec_from_file_location("textkit_app", APP)
    module = importlib.util.module_from_spec(spec)
    writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # keep plugins/ clean
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = writes_bytecode
    yield module, palisade.plugin
    palisade.plugin.__dict__.update(saved)


def test_functions_stay_plain(textkit, capsys):
    app, _ = textkit
    assert app.greet("Ada") == "Hello, Ada!"
    assert app.greet("Ada", excited=True) == "Hello, Ada!!!"
    assert "[info] greeting Ada" in capsys.readouterr().err
    assert app.count_primes(100) == 25


def test_declarations(textkit):
    _, plugin = textkit
    assert sorted(plugin.tools) == ["count_primes", "greet", "word_count"]
    greet = plugin.tools["greet"]
    assert greet.description == "Say hello to someone" and greet.read_only is True
    assert greet.input_schema["required"] == ["name"]
    output = plugin.tools["word_count"].output_schema
    assert {k: v["type"] for k, v in output["properties"].items()} == {
        "lines": "integer", "words": "integer", "characters": "integer",
    }
    about = plugin.resources["textkit-py://about"].info
    assert (about.name, about.mime_type, about.description) == ("about", "text/plain", None)
    summarize = plugin.prompts["summarize"]
    assert summarize.description == "Summarize a file"
    assert [(a.name, a.description, a.required) for a in summarize.arguments] == [
        ("path", "The file to summarize", True),
        ("style", "short or detailed", False),
    ]


def test_word_count(textkit, tmp_path):
    _, plugin = textkit
    file = tmp_path / "a.txt"
    file.write_text("one two\nthree\n\nfour five six\n")
    result = plugin.call_tool("word_count", {"path": str(file)})
    assert result.structured_content == {"lines": 4, "words": 6, "characters": 29}
    missing = plugin.call_tool("word_count", {"path": str(tmp_path / "none.txt")})
    assert missing.is_error
    assert missing.text() == f"cannot read {tmp_path / 'none.txt'}: No such file or directory"


def test_resources_prompt_and_completion(textkit):
    _, plugin = textkit
    assert plugin.read_resource("textkit-py://about")[0].body == "textkit, a Palisade plugin written in Python"
    assert plugin.read_resource("textkit-py://upper/hello%20world")[0].body == "HELLO WORLD"
    with pytest.raises(PluginError) as caught:
        plugin.read_resource("textkit-py://nothing")
    assert caught.value.code is ErrorCode.NOT_FOUND
    got = plugin.get_prompt("summarize", {"path": "/data/a.txt"})
    assert got.messages[0].content.text == "Summarize the file /data/a.txt in a short style."
    assert plugin.complete_prompt("summarize", "style", "d").values == ["detailed"]
