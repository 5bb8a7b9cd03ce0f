#!/usr/bin/env python3
"""No `pub fn` of the server or the runtime returns `Result<_, String>` (CONTRIBUTING: errors
are types that say what went wrong; a String cannot be matched, only shown).

Scans host/src and crates/runtime/src for `pub fn` / `pub async fn` signatures (not `pub(crate)`
and the like) whose return type names `Result<..., String>`. Exits 1 naming each.
"""

import pathlib
import re
import sys

SIGNATURE = re.compile(r"(?m)^\s*pub (?:async )?fn (\w+)[^{;]*?[{;]")
STRING_ERROR = re.compile(r"Result<[^{;]*,\s*String>")


def main() -> int:
    found = []
    for root in ("host/src", "crates/runtime/src"):
        for path in sorted(pathlib.Path(root).rglob("*.rs")):
            text = path.read_text(encoding="utf-8")
            for m in SIGNATURE.finditer(text):
                if STRING_ERROR.search(m.group(0)):
                    line = text.count("\n", 0, m.start()) + 1
                    found.append(f"{path}:{line}: pub fn {m.group(1)} returns Result<_, String>")
    for f in found:
        print(f, file=sys.stderr)
    if found:
        print("give each a typed error (thiserror), or make it pub(crate)", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
