"""palisade_sdk.host outside a component, and the semantics of Answers."""

import pytest

from palisade_sdk import (
    AskFailed,
    AwaitingAnswer,
    ErrorCode,
    Plugin,
    PluginError,
    TextContent,
    host,
)


def test_stand_ins_outside_a_component(capsys):
    assert not host.inside_component()
    host.log("info", "hello")
    host.log(host.LogLevel.WARNING, "careful")
    host.log("WARN", "also careful")
    assert capsys.readouterr().err.splitlines() == ["[info] hello", "[warning] careful", "[warning] also careful"]
    host.report_progress(1, 10, "a tenth")
    host.notify_resource_updated("x://y")
    host.notify_list_changed("tools")
    assert host.is_cancelled() is False
    assert host.list_roots() == []


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="not a log level: 'loud'"):
        host.log("loud", "x")
    with pytest.raises(ValueError, match="not a list"):
        host.notify_list_changed("widgets")
    with pytest.raises(TypeError, match="ask with host.form"):
        host.ask({"q": "what?"})
    with pytest.raises(ValueError, match="two questions under the key `a`"):
        host.ask([("a", host.client_roots()), ("a", host.client_roots())])


def test_ask_outside_a_component_fails_every_question():
    answers = host.ask({"name": host.form("Name?", {"type": "object"}), "roots": host.client_roots()})
    assert list(answers) == ["name", "roots"]
    assert not answers.awaiting
    with pytest.raises(AskFailed, match="not running inside Palisade"):
        answers.elicitation("name")


def test_requests():
    sampled = host.sample("Summarize this", max_tokens=50, temperature=0.2)
    assert sampled.max_tokens == 50 and sampled.temperature == 0.2
    assert [(m.role, m.content.text) for m in sampled.messages] == [("user", "Summarize this")]
    assert host.url("Sign in", "https://example.com", "id-1").elicitation_id == "id-1"


def test_answers_getters():
    answers = host.Answers(
        {
            "name": host.ElicitationAnswer("accept", {"name": "Ada"}),
            "declined": host.ElicitationAnswer("decline", {"name": "x"}),
            "summary": host.SamplingAnswer("assistant", [TextContent("a"), TextContent("b")], "m"),
            "roots": [host.ClientRoot("file:///p", "p")],
            "failed": AskFailed("client cannot sample"),
        }
    )
    assert not answers.awaiting
    answers.ready()
    assert answers.elicitation("name").field("name") == "Ada"
    assert answers.elicitation("name").field("other", "default") == "default"
    assert answers.elicitation("declined").field("name") is None
    assert answers.sampling("summary").text == "a\nb"
    assert answers.roots("roots")[0].uri == "file:///p"
    with pytest.raises(AskFailed, match="client cannot sample"):
        answers.sampling("failed")
    with pytest.raises(AskFailed, match="the answer under `name` is not a roots answer"):
        answers.roots("name")
    with pytest.raises(AskFailed, match="nothing was asked under `nope`"):
        answers.elicitation("nope")


def test_awaiting_answers_end_the_call_quickly(monkeypatch):
    answers = host.Answers({"a": [], "b": AwaitingAnswer()})
    assert answers.awaiting
    with pytest.raises(AwaitingAnswer):
        answers.ready()
    with pytest.raises(AwaitingAnswer):
        answers.elicitation("b")

    p = Plugin()
    ran_after = []

    @p.tool
    def greet() -> str:
        name = host.ask({"user_name": host.form("Name?", {"type": "object"})}).elicitation("user_name")
        ran_after.append(name)
        return "never"

    @p.prompt
    def asks() -> str:
        host.ask({"q": host.client_roots()}).roots("q")
        return "never"

    monkeypatch.setattr(host, "ask", lambda requests: host.Answers((k, AwaitingAnswer()) for k in requests))
    result = p.call_tool("greet")
    assert result.is_error and result.text() == "awaiting the client's answer"
    assert ran_after == []
    with pytest.raises(PluginError) as caught:
        p.get_prompt("asks", {})
    assert caught.value.code is ErrorCode.INTERNAL


def test_a_test_can_supply_answers(monkeypatch):
    p = Plugin()

    @p.tool
    def greet() -> str:
        answer = host.ask({"user_name": host.form("Name?", {"type": "object"})}).elicitation("user_name")
        return f"Hello, {answer.field('name', 'stranger')}!"

    monkeypatch.setattr(host, "ask", lambda requests: host.Answers({"user_name": host.ElicitationAnswer("accept", {"name": "Ada"})}))
    assert p.call_tool("greet").text() == "Hello, Ada!"
    monkeypatch.setattr(host, "ask", lambda requests: host.Answers({"user_name": AskFailed("no elicitation")}))
    failed = p.call_tool("greet")
    assert failed.is_error and failed.text() == "no elicitation"


def test_get_env_outside_a_component_reads_the_process_environment(monkeypatch):
    monkeypatch.setenv("PALISADE_SDK_TEST_VAR", "x")
    assert host.get_env("PALISADE_SDK_TEST_VAR") == "x"
    assert host.get_env("PALISADE_SDK_TEST_SURELY_UNSET") is None
