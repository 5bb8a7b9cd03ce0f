"""textkit: the example plugin written in Python with palisade_sdk (sdk-guest/python).

Build it with `palisade-py build app.py` (plugins/build.sh does, into target/plugins/textkit-py.wasm).
Its twin, plugins/textkit-js, behaves the same in JavaScript.
"""

from typing import TypedDict

import palisade_sdk as palisade
from palisade_sdk import host


@palisade.tool(read_only=True)
def greet(name: str, excited: bool = False) -> str:
    """Say hello to someone

    Args:
        name: Who to greet.
        excited: Whether to greet them with enthusiasm.
    """
    host.log("info", f"greeting {name}")
    return f"Hello, {name}!!!" if excited else f"Hello, {name}!"


class Counts(TypedDict):
    """What `word_count` counts.

    Attributes:
        lines: Lines of text.
        words: Words, separated by white space.
        characters: Characters (Unicode code points).
    """

    lines: int
    words: int
    characters: int


@palisade.tool(read_only=True)
def word_count(path: str) -> Counts:
    """Count the lines, words and characters of a text file

    Args:
        path: The file to count, as the plugin sees it (such as /data/a.txt).
    """
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise palisade.ToolError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise palisade.ToolError(f"cannot read {path}: not UTF-8 text ({e})") from None
    return {"lines": len(text.splitlines()), "words": len(text.split()), "characters": len(text)}


@palisade.tool(read_only=True, task_support="optional")
def count_primes(below: int) -> int:
    """Count the prime numbers below a number, slowly (naive trial division)

    A large number takes minutes: for a client that can run tasks, the call runs as one (under
    the plugin's task limits), and its progress shows in the task's status.

    Args:
        below: Count the primes smaller than this.
    """
    count = 0
    step = max(below // 10, 1)
    for n in range(2, below):
        if n % step == 0:
            host.report_progress(n, below, f"{count} primes below {n}")
        d = 2
        while d * d <= n:
            if n % d == 0:
                break
            d += 1
        else:
            count += 1
    return count


@palisade.resource("textkit-py://about", name="about", mime_type="text/plain")
def about() -> str:
    return "textkit, a Palisade plugin written in Python"


@palisade.resource_template("textkit-py://upper/{text}", name="upper", mime_type="text/plain")
def upper(text: str) -> str:
    # `text` arrives percent-decoded: textkit-py://upper/hello%20world gives "hello world".
    return text.upper()


@palisade.prompt(complete={"style": ["short", "detailed"]})
def summarize(path: str, style: str = "short") -> str:
    """Summarize a file

    Args:
        path: The file to summarize
        style: short or detailed
    """
    return f"Summarize the file {path} in a {style} style."
