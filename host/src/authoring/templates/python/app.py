"""{{name}}: a Palisade plugin."""

import palisade_sdk as palisade


@palisade.tool(read_only=True)
def greet(name: str) -> str:
    """Say hello to someone

    Args:
        name: Who to greet.
    """
    return f"Hello, {name}!"
