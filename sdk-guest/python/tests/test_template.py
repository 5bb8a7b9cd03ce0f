"""URI templates: `{var}` and `{+var}`, percent-decoding, what is refused."""

import pytest

from palisade_sdk import UriTemplate, percent_encode


def match(template, uri):
    return UriTemplate(template).match(uri)


def test_simple_variable_stops_at_reserved_characters():
    assert match("notes://{name}", "notes://todo") == {"name": "todo"}
    assert match("notes://{name}", "notes://a/b") is None
    assert match("notes://{name}", "notes://") is None
    assert match("notes://{name}", "other://todo") is None
    assert match("notes://{name}", "notes://my%20note%2F..") == {"name": "my note/.."}


def test_reserved_variable_takes_slashes_and_backtracks():
    assert match("file:///{+path}.md", "file:///a/b.c.md") == {"path": "a/b.c"}
    assert match("weather://{city}/{+rest}", "weather://paris/today/noon") == {
        "city": "paris",
        "rest": "today/noon",
    }
    assert match("x://{+p}.md", "x://a.txt") is None


def test_malformed_escapes_do_not_match():
    assert match("n://{v}", "n://%zz") is None
    assert match("n://{v}", "n://%ff") is None
    assert match("n://{v}", "n://%4") is None
    assert match("n://{v}", "n://caf%C3%A9") == {"v": "café"}


@pytest.mark.parametrize(
    "bad", ["x://{?q}", "x://{a,b}", "x://{p*}", "x://{p:3}", "x://{}", "x://{a", "x://a}", "x://{a}/{a}", "x://{a}{b}"]
)
def test_unsupported_templates_are_refused(bad):
    with pytest.raises(ValueError):
        UriTemplate(bad)


def test_variables_in_order():
    assert UriTemplate("x://{a}/{+b}").variables == ["a", "b"]


def test_encode_then_match_gives_the_value_back():
    value = "é ü/?#%"
    assert percent_encode("my notes/2024") == "my%20notes%2F2024"
    assert match("n://{v}", "n://" + percent_encode(value)) == {"v": value}
