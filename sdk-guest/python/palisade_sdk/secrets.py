"""Secrets and configuration values the operator gives the plugin, read through
``wasi:config/store``.

The server's configuration names them: ``[plugins.NAME.secrets]`` for secrets (an API key, a
token: read from the server's environment or a file, never logged) and ``[plugins.NAME.config]``
for plain values. Both are read by name with :func:`secret`.
"""

from __future__ import annotations

from ._errors import ToolError

# componentize-py puts in the component only the modules imported while it builds.
try:
    from componentize_py_types import Err
    from wit_world.imports import config_store
except ImportError:  # pragma: no cover - outside a component
    pass


class MissingSecret(ToolError):
    """A secret the plugin asked for and was not given. Raised in a tool, its message (which
    says how to grant it) is the failed result the model reads."""


def config(name: str) -> str | None:
    """The configuration value (or secret) ``name``, or ``None``: for settings with a default,
    such as an API's base URL."""
    try:
        return config_store.get(name)
    except Err:
        return None


def secret(name: str) -> str:
    """The secret (or configuration value) ``name``; :class:`MissingSecret` when the server's
    configuration does not give it."""
    try:
        value = config_store.get(name)
    except Err as e:
        raise MissingSecret(f"the secret {name} cannot be read: {getattr(e.value, 'value', e.value)}") from None
    if value is None:
        raise MissingSecret(
            f'the secret {name} is not given to this plugin: add `{name} = {{ env = "HOST_VARIABLE" }}` '
            '(or `{ file = "PATH" }`) under [plugins.PLUGIN.secrets] in the server\'s configuration'
        )
    return value
