"""The build tool's staging and checks (componentize-py itself is not run here)."""

from pathlib import Path

import pytest

from palisade_sdk import build


def write(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_stage_copies_the_app_its_modules_and_the_sdk(tmp_path):
    app_dir = tmp_path / "plugin"
    app = write(app_dir / "app.py", "import helper\n")
    write(app_dir / "helper.py")
    write(app_dir / "pkg" / "__init__.py")
    write(app_dir / "pkg" / "sub" / "__init__.py")
    write(app_dir / "pkg" / "data.json", "{}")
    write(app_dir / "notapkg" / "x.py")
    write(app_dir / "node_modules" / "m" / "componentize-py.toml", "garbage = [")
    write(app_dir / ".venv" / "lib" / "site.py")
    write(app_dir / "tests" / "test_app.py")
    write(app_dir / "palisade_sdk.py", "shadow = True")
    write(app_dir / "README.md")
    staging = tmp_path / "staging"
    staging.mkdir()

    entry = build.stage(app, staging)

    assert entry == "palisade_entry"
    staged = sorted(str(p.relative_to(staging)) for p in staging.rglob("*") if p.is_file())
    assert "app.py" in staged and "helper.py" in staged
    assert "pkg/__init__.py" in staged and "pkg/sub/__init__.py" in staged
    assert "palisade_sdk/__init__.py" in staged and "palisade_sdk/exports.py" in staged
    for left_out in ("pkg/data.json", "notapkg/x.py", "README.md", "tests/test_app.py", "palisade_sdk.py"):
        assert left_out not in staged
    assert not any(p.startswith(("node_modules", ".venv")) for p in staged)
    entry_text = (staging / "palisade_entry.py").read_text()
    assert "import app " in entry_text
    assert "from palisade_sdk.exports import Completion, Prompts, Resources, Tools, prepare" in entry_text
    # Bound and warmed while componentize-py snapshots, not by each fresh instance's call.
    assert "\nprepare()" in entry_text


@pytest.mark.parametrize(
    "name, why", [("my-app.py", "not a valid module name"), ("wit_world.py", "taken by the SDK"), ("class.py", "not a valid")]
)
def test_bad_app_names(tmp_path, name, why):
    app = write(tmp_path / name)
    with pytest.raises(build.BuildError, match=why):
        build.build(app, wit=str(tmp_path))


def test_missing_app(tmp_path):
    with pytest.raises(build.BuildError, match="no such file"):
        build.build(tmp_path / "nothere.py")


def test_wit_discovery(tmp_path, monkeypatch):
    wit = tmp_path / "wit"
    write(wit / "worlds.wit", "package palisade:plugin@0.2.0;\nworld plugin {\n}\nworld tool-provider {\n}\n")
    assert build.find_wit(str(wit)) == wit.resolve()
    monkeypatch.setenv("PALISADE_WIT", str(wit))
    assert build.find_wit(None) == wit.resolve()
    with pytest.raises(build.BuildError, match="--wit: .* is not a directory"):
        build.find_wit(str(tmp_path / "none"))
    with pytest.raises(build.BuildError, match="holds no .wit files"):
        build.find_wit(str(tmp_path))
    build._check_world(wit, "tool-provider")
    with pytest.raises(build.BuildError, match=r"has no world `nope` \(it has: plugin, tool-provider\)"):
        build._check_world(wit, "nope")


def test_wit_found_in_the_checkout(monkeypatch):
    monkeypatch.delenv("PALISADE_WIT", raising=False)
    repo_wit = Path(build.__file__).resolve().parents[3] / "wit"
    if not (repo_wit / "worlds.wit").is_file():
        pytest.skip("not running from the repository checkout")
    assert build.find_wit(None) == repo_wit
    build._check_world(repo_wit, "plugin")


def test_world_exports_are_read_from_the_wit():
    repo_wit = Path(build.__file__).resolve().parents[3] / "wit"
    if not (repo_wit / "worlds.wit").is_file():
        pytest.skip("not running from the repository checkout")
    assert build.world_exports(repo_wit, "plugin") == {"tools", "resources", "prompts", "completion"}
    assert build.world_exports(repo_wit, "tool-provider") == {"tools"}
    assert build.world_exports(repo_wit, "prompt-pack") == {"prompts"}


def test_a_world_that_drops_definitions_fails_the_build_check():
    from palisade_sdk import Plugin

    plugin = Plugin()

    @plugin.tool
    def shout(text: str) -> str:
        """Shout"""
        return text.upper()

    plugin.check_served(["tools"], "tool-provider", "app.py")
    with pytest.raises(RuntimeError, match=r"app.py defines @tool shout, but the world `resource-provider` does not export `tools` \(it exports: resources\)"):
        plugin.check_served(["resources"], "resource-provider", "app.py")
    with pytest.raises(RuntimeError, match="defines no tools, resources or prompts"):
        Plugin().check_served(["tools"], "plugin", "app.py")
