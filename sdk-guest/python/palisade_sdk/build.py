"""``palisade-py build APP.py``: builds a Python plugin into a Palisade component.

It stages the app (the file, and the Python modules and packages next to it) and this SDK in a
temporary directory, adds an entry module that imports the app and re-exports the SDK's export
classes, and runs the pinned componentize-py on it, with the same Python as this tool.

componentize-py imports the entry module while it builds and snapshots the interpreter: only
modules imported then are in the component (whatever else the staged or site-packages
directories hold is left out). Pure-Python packages installed in the active environment can
therefore be imported by a plugin; packages with native extensions cannot.
"""

from __future__ import annotations

import argparse
import importlib.util
import keyword
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMPONENTIZE_PY_VERSION = "0.25.1"
DEFAULT_WORLD = "plugin"
ENTRY_MODULE = "palisade_entry"

#: Directories next to an app that are never staged.
SKIPPED_DIRS = {
    "__pycache__", "node_modules", "venv", ".venv", "env", "site-packages", "build", "dist",
    "target", "tests", "test",
}
#: Module names the SDK, the generated bindings or the entry module already use.
RESERVED_MODULES = {
    "palisade_sdk", "wit_world", "componentize_py_types", "componentize_py_runtime",
    "componentize_py_async_support", "poll_loop", ENTRY_MODULE,
}

_RUNNER = (
    "import sys; from componentize_py import script; "
    "sys.argv[0] = 'componentize-py'; sys.exit(script())"
)


class BuildError(Exception):
    """A build that cannot go on, with the reason for people."""


def find_wit(given: str | None) -> Path:
    """The WIT directory: ``given`` (``--wit``), else ``$PALISADE_WIT``, else the repository's
    ``wit/`` when this package is used from its checkout (an editable install)."""
    if given:
        return _check_wit(Path(given), "--wit")
    env = os.environ.get("PALISADE_WIT")
    if env:
        return _check_wit(Path(env), "$PALISADE_WIT")
    candidate = Path(__file__).resolve().parents[3] / "wit"
    if _is_palisade_wit(candidate):
        return candidate
    raise BuildError(
        "cannot find the Palisade WIT contract: pass --wit DIR (the repository's wit/ directory) "
        "or set PALISADE_WIT"
    )


def _is_palisade_wit(path: Path) -> bool:
    if not path.is_dir():
        return False
    for wit in path.glob("*.wit"):
        try:
            if "package palisade:plugin" in wit.read_text(encoding="utf-8"):
                return True
        except OSError:
            continue
    return False


def _check_wit(path: Path, source: str) -> Path:
    if not path.is_dir():
        raise BuildError(f"{source}: {path} is not a directory")
    if not any(path.glob("*.wit")):
        raise BuildError(f"{source}: {path} holds no .wit files")
    return path.resolve()


def _check_world(wit: Path, world: str) -> str:
    """The world's full name (``palisade:plugin/plugin@0.2.0``): componentize-py needs it once
    the SDK's own WIT is beside the app's."""
    pattern = re.compile(rf"^\s*world\s+{re.escape(world)}\s*\{{", re.MULTILINE)
    worlds = []
    for path in sorted(wit.glob("*.wit")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if pattern.search(text):
            return _qualified(text, world)
        worlds += re.findall(r"^\s*world\s+([A-Za-z0-9-]+)\s*\{", text, re.MULTILINE)
    raise BuildError(f"the WIT in {wit} has no world `{world}` (it has: {', '.join(worlds) or 'none'})")


def _qualified(text: str, item: str) -> str:
    """``item`` (a world or an interface) of the package ``text`` declares, by its full name."""
    package = re.search(r"^\s*package\s+([a-z0-9-]+:[a-z0-9-]+)(@[^\s;]+)?\s*;", text, re.MULTILINE)
    if package is None:
        raise BuildError("the WIT file that defines the world has no `package` line")
    return f"{package.group(1)}/{item}{package.group(2) or ''}"


#: The WIT of what ``palisade_sdk.http`` and ``palisade_sdk.secret`` import (wasi:http,
#: wasi:config): ``deps/`` joins the app's WIT, and the world gets these imports.
SDK_WIT = Path(__file__).resolve().parent / "wasi_wit"
SDK_IMPORTS = ("wasi:http/outgoing-handler@0.2.12", "wasi:config/store@0.2.0-draft")
#: The world built: the app's world and the SDK's imports.
APP_WORLD = "palisade-py-app"
#: Module names for imported interfaces whose plain names would clash (two `types`) or be vague.
SDK_INTERFACE_NAMES = {
    "wasi:http/types@0.2.12": "http_types",
    "wasi:config/store@0.2.0-draft": "config_store",
}


def extend_world(wit: Path, world: str, into: Path) -> list[str]:
    """Writes into ``into`` the app's WIT with a world that includes ``world`` and imports what
    the SDK uses, and returns componentize-py's arguments for it (with the module names the SDK
    imports its bindings by)."""
    qualified = _check_world(wit, world)
    into.mkdir(parents=True)
    for source in wit.glob("*.wit"):
        shutil.copy2(source, into / source.name)
    (into / "deps").mkdir()
    declared = set()
    if (wit / "deps").is_dir():
        for entry in (wit / "deps").iterdir():
            target = into / "deps" / entry.name
            if entry.is_dir():
                shutil.copytree(entry, target)
            else:
                shutil.copy2(entry, target)
        for dep in (wit / "deps").rglob("*.wit"):
            declared.update(_packages(dep.read_text(encoding="utf-8", errors="replace")))
    for dep in (SDK_WIT / "deps").glob("*.wit"):
        # A package the app's own WIT already brings is used as it is.
        if not _packages(dep.read_text(encoding="utf-8")) & declared:
            shutil.copy2(dep, into / "deps" / f"palisade-sdk-{dep.name}")
    package = qualified.partition("/")[0]
    version = qualified.partition("@")[2]
    imports = "".join(f"    import {name};\n" for name in SDK_IMPORTS)
    (into / f"{APP_WORLD}.wit").write_text(
        f"package {package}{'@' + version if version else ''};\n\n"
        f"world {APP_WORLD} {{\n    include {world};\n{imports}}}\n",
        encoding="utf-8",
    )
    types = f"{package}/types{'@' + version if version else ''}"
    args = ["-d", str(into), "-w", APP_WORLD]
    for interface, module in {types: "types", **SDK_INTERFACE_NAMES}.items():
        args += ["--import-interface-name", f"{interface}={module}"]
    return args


def _packages(text: str) -> set[str]:
    return set(re.findall(r"^\s*package\s+([^\s;{]+)", text, re.MULTILINE))


def _check_app(app: Path) -> str:
    if not app.exists():
        raise BuildError(f"{app}: no such file")
    if not app.is_file() or app.suffix != ".py":
        raise BuildError(f"{app}: not a Python file (.py)")
    module = app.stem
    if not module.isidentifier() or keyword.iskeyword(module):
        raise BuildError(f"{app}: `{module}` is not a valid module name; rename the file (letters, digits, _)")
    if module in RESERVED_MODULES:
        raise BuildError(f"{app}: the module name `{module}` is taken by the SDK or its bindings; rename the file")
    return module


def world_exports(wit: Path, world: str) -> set[str]:
    """The interfaces ``world`` exports, by their plain names (``tools``, ``resources``...)."""
    pattern = re.compile(rf"^\s*world\s+{re.escape(world)}\s*\{{(.*?)^\s*\}}", re.MULTILINE | re.DOTALL)
    for path in sorted(wit.glob("*.wit")):
        text = re.sub(r"//[^\n]*", "", path.read_text(encoding="utf-8", errors="replace"))
        found = pattern.search(text)
        if found:
            return set(re.findall(r"^\s*export\s+([a-z][a-z0-9-]*)\s*;", found.group(1), re.MULTILINE))
    return set()


#: Marks the line of a build-time check's failure in componentize-py's output.
CHECK_FAILED = "palisade-py build check failed: "


def stage(app: Path, into: Path, world: str = DEFAULT_WORLD, exports: set[str] | None = None) -> str:
    """Copies the SDK, the app and the Python modules and packages next to it into ``into``,
    and writes the entry module there. Returns the entry module's name. With ``exports`` (the
    world's), the entry module checks, while componentize-py builds, that the world serves
    everything the app defines."""
    module = _check_app(app)
    sdk = Path(__file__).resolve().parent
    into.mkdir(parents=True, exist_ok=True)
    (into / "palisade_sdk").mkdir()
    for source in sdk.glob("*.py"):
        shutil.copy2(source, into / "palisade_sdk" / source.name)
    for entry in sorted(app.parent.iterdir()):
        name = entry.name
        if name.startswith(".") or name in SKIPPED_DIRS:
            continue
        if entry.is_file() and entry.suffix == ".py" and entry.stem not in RESERVED_MODULES:
            shutil.copy2(entry, into / name)
        elif entry.is_dir() and name.isidentifier() and name not in RESERVED_MODULES and (entry / "__init__.py").is_file():
            _copy_package(entry, into / name)
    (into / f"{ENTRY_MODULE}.py").write_text(
        "# Generated by palisade-py build: the module componentize-py builds the component from.\n"
        f"import {module}  # noqa: F401  (runs the plugin's decorators)\n"
        "from palisade_sdk.exports import Completion, Prompts, Resources, Tools, prepare  # noqa: F401\n"
        "prepare()  # imported now, in the snapshot, rather than by every fresh instance's call\n"
        + (
            ""
            if exports is None
            else "import palisade_sdk\n"
            f"palisade_sdk.plugin.check_served({sorted(exports)!r}, {world!r}, {app.name!r})\n"
        )
        + "import sys\n"
        "if 'urllib.request' in sys.modules:  # the app uses urllib: send it through wasi:http\n"
        "    from palisade_sdk import http\n"
        "    http.install_urllib()\n",
        encoding="utf-8",
    )
    return ENTRY_MODULE


def _copy_package(source: Path, dest: Path) -> None:
    dest.mkdir()
    for entry in source.iterdir():
        if entry.name.startswith(".") or entry.name in SKIPPED_DIRS:
            continue
        if entry.is_file() and entry.suffix == ".py":
            shutil.copy2(entry, dest / entry.name)
        elif entry.is_dir() and (entry / "__init__.py").is_file():
            _copy_package(entry, dest / entry.name)


def _check_componentize_py() -> None:
    if importlib.util.find_spec("componentize_py") is None:
        raise BuildError(
            f"componentize-py is not installed for {sys.executable}: "
            f"pip install componentize-py=={COMPONENTIZE_PY_VERSION}"
        )
    try:
        from importlib.metadata import version

        installed = version("componentize-py")
    except Exception:
        return
    if installed != COMPONENTIZE_PY_VERSION:
        print(
            f"palisade-py: warning: componentize-py {installed} is installed; the SDK is made for "
            f"{COMPONENTIZE_PY_VERSION} (pip install componentize-py=={COMPONENTIZE_PY_VERSION})",
            file=sys.stderr,
        )


def build(app: Path, output: Path | None = None, wit: str | None = None, world: str = DEFAULT_WORLD) -> Path:
    """Builds ``app`` into a component at ``output`` (default: next to the app, ``.wasm``).
    Raises :class:`BuildError` with the reason (and componentize-py's output) on failure."""
    app = Path(app).resolve()
    _check_app(app)
    wit_dir = find_wit(wit)
    _check_world(wit_dir, world)
    _check_componentize_py()
    output = Path(output).resolve() if output else app.with_suffix(".wasm")
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.with_name(f".{output.name}.{os.getpid()}.partial")
    with tempfile.TemporaryDirectory(prefix="palisade-py-") as staging:
        entry = stage(app, Path(staging) / "app", world, world_exports(wit_dir, world))
        world_args = extend_world(wit_dir, world, Path(staging) / "wit")
        command = [
            sys.executable, "-c", _RUNNER, *world_args,
            "componentize", entry, "-p", str(Path(staging) / "app"), "-o", str(partial),
        ]
        env = dict(os.environ, RUST_BACKTRACE="0", RUST_LIB_BACKTRACE="0", PYTHONDONTWRITEBYTECODE="1")
        done = subprocess.run(command, cwd=Path(staging) / "app", env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0 or not partial.is_file():
        partial.unlink(missing_ok=True)
        for line in done.stdout.splitlines():
            if CHECK_FAILED in line:
                raise BuildError(line.split(CHECK_FAILED, 1)[1])
        raise BuildError(
            f"componentize-py failed (exit {done.returncode}) building {app}:\n{done.stdout.rstrip()}"
        )
    os.replace(partial, output)  # in one step: the host may be watching the file
    return output


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="palisade-py", description="Build Palisade plugins written in Python into WebAssembly components."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    build_cmd = commands.add_parser(
        "build",
        help="build APP.py into a component",
        description="Build APP.py (a module defining tools, resources and prompts with palisade_sdk) "
        "into a Palisade component with componentize-py " + COMPONENTIZE_PY_VERSION + ".",
    )
    build_cmd.add_argument("app", metavar="APP.py", help="the plugin's main module")
    build_cmd.add_argument("-o", "--output", metavar="OUT.wasm", help="the component to write (default: APP.wasm next to the app)")
    build_cmd.add_argument("--wit", metavar="DIR", help="the WIT contract (default: $PALISADE_WIT, or the repository's wit/)")
    build_cmd.add_argument("--world", default=DEFAULT_WORLD, help=f"the WIT world to target (default: {DEFAULT_WORLD})")
    args = parser.parse_args(argv)

    started = time.monotonic()
    try:
        out = build(Path(args.app), Path(args.output) if args.output else None, args.wit, args.world)
    except BuildError as e:
        print(f"palisade-py: error: {e}", file=sys.stderr)
        return 1
    size = out.stat().st_size
    print(f"built {out} ({size / 1_000_000:.1f} MB) in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
