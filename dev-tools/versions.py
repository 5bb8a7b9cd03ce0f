#!/usr/bin/env python3
"""One version for the workspace, the SDKs and the WIT package: checks that they agree.

Usage: versions.py [REPO]   (default: the repository this script is in)

The version is `[workspace.package] version` in the root Cargo.toml. Each of these must equal it:
  - every Cargo.toml: its `[workspace.package] version` (plugins/Cargo.toml) and its
    `[package] version`, unless that is `version.workspace = true`;
  - the Python SDK: `[project] version` in sdk-guest/python/pyproject.toml and `__version__` in
    sdk-guest/python/palisade_sdk/__init__.py;
  - the JavaScript SDK: `version` in sdk-guest/js/package.json, and the two in its
    package-lock.json (`npm ci` does not rewrite them);
  - the WIT package: `package palisade:plugin@X.Y.Z;` in every wit/*.wit file, and the SDKs'
    world `package palisade:sdk@X.Y.Z;` in sdk-guest/wit/sdk.wit;
  - the Go SDK's `const Version = "X.Y.Z"` (sdk-guest/go/palisade.go) and the C SDK's
    `#define PALISADE_SDK_VERSION "X.Y.Z"` (sdk-guest/c/palisade.h);
  - the deployment example's image tag (deploy/: `.../palisade:X.Y.Z`, kustomize's `newTag`);
  - every mention of `palisade:plugin@X.Y.Z` or `palisade:plugin/INTERFACE@X.Y.Z` (or of
    `palisade:plugin/A, B or C @X.Y.Z`) in the repository's text files (code that names an interface, the SDKs, the docs), except
    CHANGELOG.md, which names old versions on purpose, and lines that say "another version on
    purpose" (the tests of a plugin built against another version).
Prints each place that disagrees, or cannot be read, and exits 1; else prints the version, exits 0.
Cargo.lock files are left to cargo, which rewrites them on the next build.
"""
import json
import os
import re
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: Directories never looked into: build output, installed packages, caches.
SKIP_DIRS = {".git", "target", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".ruff_cache"}
#: A line that names another version deliberately (a test of a mismatch) says so.
ON_PURPOSE = "another version on purpose"
#: Files whose mentions of the WIT package are not checked.
SKIP_MENTIONS = {"CHANGELOG.md"}
#: Text files scanned for mentions of the WIT package.
TEXT_SUFFIXES = {
    ".rs", ".md", ".wit", ".py", ".js", ".mjs", ".ts", ".json", ".toml", ".txt", ".wat",
    ".sh", ".yaml", ".yml", ".go", ".c", ".h", ".cpp", ".zig",
}
MAX_TEXT_BYTES = 2 << 20

#: The deployment example's image tag: `.../palisade:X.Y.Z`, or kustomize's `newTag: "X.Y.Z"`.
IMAGE_TAG = re.compile(r"(?:/palisade:|newTag:\s*\"?)(\d+\.\d+\.\d+)")
WIT_PACKAGE = re.compile(r"^\s*package\s+palisade:plugin@([^\s;]+)\s*;", re.MULTILINE)
#: `palisade:plugin@V`, `palisade:plugin/tools@V`, and lists such as
#: `palisade:plugin/tools, resources, prompts or completion @V`.
WIT_MENTION = re.compile(r"palisade:plugin(?:/[a-z][a-z0-9, -]*)?@(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)")
SDK_PACKAGE = re.compile(r"^\s*package\s+palisade:sdk@([^\s;]+)\s*;", re.MULTILINE)
GO_VERSION = re.compile(r'^const Version = "([^"]*)"', re.MULTILINE)
C_VERSION = re.compile(r'^#define PALISADE_SDK_VERSION "([^"]*)"', re.MULTILINE)
PY_VERSION = re.compile(r"^__version__\s*=\s*[\"']([^\"']*)[\"']", re.MULTILINE)


def files(repo: Path) -> Iterator[Path]:
    """Every file under `repo`, outside SKIP_DIRS and *.egg-info, in a stable order."""
    for dirpath, dirnames, filenames in os.walk(repo):
        dirnames[:] = sorted(
            d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".egg-info")
        )
        for name in sorted(filenames):
            yield Path(dirpath) / name


def check(repo: Path) -> tuple[str | None, list[str]]:
    """The workspace version and every disagreement, as `path: what`."""
    problems: list[str] = []

    def rel(path: Path) -> str:
        return path.relative_to(repo).as_posix()

    def toml(path: Path) -> dict[str, Any] | None:
        try:
            with path.open("rb") as f:
                return tomllib.load(f)
        except (OSError, tomllib.TOMLDecodeError) as e:
            problems.append(f"{rel(path)}: cannot read it: {e}")
            return None

    root = toml(repo / "Cargo.toml")
    version = ((root or {}).get("workspace", {}).get("package", {})).get("version")
    if not isinstance(version, str):
        problems.append("Cargo.toml: no [workspace.package] version to compare with")
        return None, problems

    def agree(where: str, found: object) -> None:
        if found != version:
            problems.append(f"{where} is {found!r}, not the workspace's {version!r}")

    all_files = list(files(repo))

    # Cargo manifests: the plugins' workspace and every crate of either workspace.
    for path in all_files:
        if path.name != "Cargo.toml" or path == repo / "Cargo.toml":
            continue
        # `palisade new`'s skeletons start the user's own plugin at its own version.
        if (repo / "host/src/authoring/templates") in path.parents:
            continue
        manifest = toml(path)
        if manifest is None:
            continue
        workspace_version = manifest.get("workspace", {}).get("package", {}).get("version")
        if workspace_version is not None:
            agree(f"{rel(path)}: [workspace.package] version", workspace_version)
        package_version = manifest.get("package", {}).get("version")
        if package_version is not None and package_version != {"workspace": True}:
            agree(f"{rel(path)}: [package] version", package_version)

    # The Python SDK.
    pyproject = repo / "sdk-guest/python/pyproject.toml"
    project = (toml(pyproject) or {}).get("project", {})
    agree(f"{rel(pyproject)}: [project] version", project.get("version"))
    init = repo / "sdk-guest/python/palisade_sdk/__init__.py"
    try:
        found = PY_VERSION.search(init.read_text(encoding="utf-8"))
        agree(f"{rel(init)}: __version__", found and found.group(1))
    except OSError as e:
        problems.append(f"{rel(init)}: cannot read it: {e}")

    # The JavaScript SDK.
    js_places: list[tuple[str, list[tuple[str, ...]]]] = [
        ("package.json", [("version",)]),
        ("package-lock.json", [("version",), ("packages", "", "version")]),
    ]
    for name, keys in js_places:
        path = repo / "sdk-guest/js" / name
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            problems.append(f"{rel(path)}: cannot read it: {e}")
            continue
        for key in keys:
            value: object = data
            for part in key:
                value = value.get(part) if isinstance(value, dict) else None
            agree(f"{rel(path)}: {'.'.join(repr(k) if k == '' else k for k in key)}", value)

    # The Go and C SDKs, and the world they are generated from.
    for relative, pattern, what in [
        ("sdk-guest/go/palisade.go", GO_VERSION, "const Version"),
        ("sdk-guest/c/palisade.h", C_VERSION, "PALISADE_SDK_VERSION"),
        ("sdk-guest/wit/sdk.wit", SDK_PACKAGE, "package palisade:sdk@"),
    ]:
        path = repo / relative
        try:
            found = pattern.search(path.read_text(encoding="utf-8"))
            agree(f"{rel(path)}: {what}", found and found.group(1))
        except OSError as e:
            problems.append(f"{rel(path)}: cannot read it: {e}")

    # The container image the deployment example builds and runs.
    for path in sorted((repo / "deploy").rglob("*")):
        if path.suffix not in {".md", ".yaml", ".yml"}:
            continue
        text = path.read_text(encoding="utf-8")
        for found in IMAGE_TAG.finditer(text):
            line = text.count("\n", 0, found.start()) + 1
            agree(f"{rel(path)}:{line}: image tag", found.group(1))

    # The WIT package.
    wit_files = sorted((repo / "wit").glob("*.wit"))
    declared = 0
    for path in wit_files:
        for found in WIT_PACKAGE.finditer(path.read_text(encoding="utf-8")):
            declared += 1
            agree(f"{rel(path)}: package palisade:plugin@", found.group(1))
    if declared == 0:
        problems.append("wit/: no `package palisade:plugin@X.Y.Z;` line in any .wit file")

    # Mentions of the WIT package's version anywhere else.
    for path in all_files:
        if (
            path.suffix not in TEXT_SUFFIXES
            or path.name in SKIP_MENTIONS
            or path.parent == repo / "wit"
            or path.stat().st_size > MAX_TEXT_BYTES
        ):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for found in WIT_MENTION.finditer(text):
            line_text = text[text.rfind("\n", 0, found.start()) + 1 : text.find("\n", found.end())]
            if found.group(1) != version and ON_PURPOSE not in line_text:
                line = text.count("\n", 0, found.start()) + 1
                problems.append(
                    f"{rel(path)}:{line}: {found.group(0)} is {found.group(1)!r}, "
                    f"not the workspace's {version!r}"
                )
    return version, problems


def main() -> int:
    if len(sys.argv) > 2 or sys.argv[1:2] in (["-h"], ["--help"]):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    repo = Path(sys.argv[1] if len(sys.argv) == 2 else Path(__file__).resolve().parent.parent)
    version, problems = check(repo.resolve())
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"versions: {len(problems)} place(s) disagree with the workspace version", file=sys.stderr)
        return 1
    print(f"versions: every declaration is {version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
