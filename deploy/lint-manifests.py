"""Checks the Kubernetes manifests of deploy/kubernetes; run by deploy/lint.sh in its virtualenv.

    python lint-manifests.py MANIFEST_DIR KUBE_VERSION...

- Every object of every *.yaml (but kustomization.yaml) is validated against the Kubernetes API
  schema of each KUBE_VERSION, strictly: an unknown field is an error, and so is an unknown kind.
- kustomization.yaml lists every manifest of the directory, and not secret.example.yaml.
- palisade.toml in the ConfigMap is valid TOML, and every file it names under
  /run/secrets/palisade/, like every secretKeyRef, is a key of the Secret in secret.example.yaml.

Prints each problem and exits 1 if there is any.
"""

import re
import sys
import tomllib
from pathlib import Path

import jsonschema
import jsonschema.protocols
import yaml
from kubernetes_validate import utils
from referencing import Registry, Resource

KUSTOMIZATION = "kustomization.yaml"
SECRET_EXAMPLE = "secret.example.yaml"
SECRETS_DIR = "/run/secrets/palisade/"

problems: list[str] = []


def problem(where: str, what: str) -> None:
    problems.append(f"{where}: {what}")


def validator(kind: str, api_version: str, kube_version: str) -> jsonschema.protocols.Validator | None:
    """The strict schema of KIND in API_VERSION for KUBE_VERSION, as kubernetes-validate finds it."""
    schema_dir = f"v{kube_version}-local-strict"
    # As kubernetes-validate names its files: apps/v1 -> apps-v1, networking.k8s.io/v1 -> networking-v1.
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    try:
        schema = utils.schema_contents(
            f"kubernetes-json-schema/{schema_dir}/{kind.lower()}-{group_version}.json", kube_version
        )
    except FileNotFoundError:
        return None
    definitions = utils.schema_contents(
        f"kubernetes-json-schema/{schema_dir}/_definitions.json", kube_version
    )
    registry = Resource.from_contents(definitions) @ (Resource.from_contents(schema) @ Registry())
    return jsonschema.Draft202012Validator(schema, registry=registry)


def check_object(where: str, obj: object, kube_versions: list[str]) -> None:
    if not isinstance(obj, dict) or not all(k in obj for k in ("apiVersion", "kind", "metadata")):
        problem(where, "not a Kubernetes object (apiVersion, kind and metadata are required)")
        return
    name = f"{obj['kind']}/{obj['metadata'].get('name', '?')}"
    for version in kube_versions:
        checker = validator(str(obj["kind"]), str(obj["apiVersion"]), version)
        if checker is None:
            problem(where, f"{name}: Kubernetes {version} has no kind {obj['kind']} in {obj['apiVersion']}")
            continue
        for error in sorted(checker.iter_errors(obj), key=lambda e: list(map(str, e.path))):
            path = ".".join(str(p) for p in error.path) or "(top)"
            problem(where, f"{name} (Kubernetes {version}): {path}: {error.message}")


def load(path: Path) -> list[object]:
    try:
        return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]
    except yaml.YAMLError as e:
        problem(path.name, f"not YAML: {e}")
        return []


def main() -> int:
    manifest_dir = Path(sys.argv[1])
    kube_versions = sys.argv[2:]
    known = utils.all_versions()
    for version in kube_versions:
        if version not in known:
            print(f"kubernetes-validate has no schemas for {version} (it has {', '.join(known)})")
            return 1

    files = sorted(manifest_dir.glob("*.yaml"))
    if not files:
        problem(str(manifest_dir), "no *.yaml manifests")
    objects: dict[str, list[object]] = {}
    for path in files:
        docs = load(path)
        objects[path.name] = docs
        if path.name == KUSTOMIZATION:
            continue
        for i, doc in enumerate(docs):
            check_object(f"{path.name}[{i}]" if len(docs) > 1 else path.name, doc, kube_versions)

    # The kustomization applies every manifest, and never the example Secret.
    kustomization = (objects.get(KUSTOMIZATION) or [{}])[0]
    if KUSTOMIZATION not in objects:
        problem(str(manifest_dir), f"no {KUSTOMIZATION}")
    elif isinstance(kustomization, dict):
        listed = kustomization.get("resources") or []
        wanted = sorted(p.name for p in files if p.name not in (KUSTOMIZATION, SECRET_EXAMPLE))
        for name in listed:
            if name not in objects:
                problem(KUSTOMIZATION, f"resources names {name}, which is not in {manifest_dir}")
        for name in wanted:
            if name not in listed:
                problem(KUSTOMIZATION, f"resources does not list {name}")
        if SECRET_EXAMPLE in listed:
            problem(KUSTOMIZATION, f"{SECRET_EXAMPLE} holds placeholders and must not be applied")

    # The secret files palisade.toml names, and the keys pods take from the Secret, exist in it.
    secret_keys: set[str] | None = None
    for doc in objects.get(SECRET_EXAMPLE, []):
        if isinstance(doc, dict) and doc.get("kind") == "Secret":
            secret_keys = set((doc.get("stringData") or {}) | (doc.get("data") or {}))
    if secret_keys is None:
        problem(SECRET_EXAMPLE, "no Secret in it")
        secret_keys = set()
    for file_name, docs in objects.items():
        for doc in docs:
            if not isinstance(doc, dict):
                continue
            if doc.get("kind") == "ConfigMap":
                for key, text in (doc.get("data") or {}).items():
                    if key.endswith(".toml"):
                        check_toml(f"{file_name} {key}", text, secret_keys)
            for ref in find_key(doc, "secretKeyRef"):
                if ref.get("key") not in secret_keys:
                    problem(file_name, f"secretKeyRef key {ref.get('key')!r} is not in {SECRET_EXAMPLE}")

    for line in problems:
        print(line)
    return 1 if problems else 0


def check_toml(where: str, text: str, secret_keys: set[str]) -> None:
    try:
        config = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        problem(where, f"not TOML: {e}")
        return
    for value in strings(config):
        if value.startswith(SECRETS_DIR) and value[len(SECRETS_DIR):] not in secret_keys:
            problem(where, f"{value} is not a key of the Secret in {SECRET_EXAMPLE}")


def strings(value: object):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def find_key(value: object, key: str):
    if isinstance(value, dict):
        for k, v in value.items():
            if k == key and isinstance(v, dict):
                yield v
            else:
                yield from find_key(v, key)
    elif isinstance(value, list):
        for v in value:
            yield from find_key(v, key)


if __name__ == "__main__":
    sys.exit(main())
