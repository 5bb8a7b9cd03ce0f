#!/usr/bin/env python3
"""Module dependency graph of one Rust crate, and its strongly connected components.

Usage: modgraph.py CRATE_SRC_DIR [--names] [--mermaid|--dot] [--edges] [--max-scc N]

Nodes are module files: the root (lib.rs, else main.rs) is `crate`, a.rs or a/mod.rs is `a`,
a/b.rs is `a::b`; only files reached from the root by `mod x;` (so main.rs beside lib.rs and
src/bin/* are other crates). An inline `mod x { .. }` counts as part of its file.
Edge A -> B when A names a path that resolves to B or to an item in B:
  default:  `use` declarations anywhere in A (any visibility, nested groups, `self`, `as`,
            globs, multi-line, in fn bodies too).
  --names:  also every path `x::y..` outside `use` lines (types, calls, variants, trait and
            macro paths, `<T as crate::x::Tr>`) starting with `crate`/`self`/`super`, a child
            module of A, or a name A imports (`limits::F` after `use crate::limits;`,
            `Cause::Io` after `use crate::Cause;`). Lone names (`Foo`) are not scanned:
            they came in by a `use`, which already counted.
Resolution: `crate`, `self`, `super` (for a.rs and a/mod.rs alike, a's parent), a child
module, or a name imported by a `use` of the file (uniform paths); then the longest run of
segments that are module files. A leftover segment that is not a top-level item of that
file is looked up in the file's `use` lines (re-exports, and private imports, which its
descendants see), then its globs (`pub use x::*`, `use super::*`) if x has the name, and
followed, through chains: `crate::Grant` with lib.rs `pub use spec::Grant` and spec.rs
`pub use crate::keyvalue::Grant` lands in keyvalue. Else the item is taken to live in the
file reached (lib.rs items -> `crate`). Other crates' paths (std, deps, `pub use dep as x`)
give no edge; `mod x;` is no edge; self-edges are dropped. Comments, string/char literals
and `#[cfg(test)] mod x {..}` are ignored, `#[cfg(test)] mod x;` files are not nodes; other
`#[cfg(test)]` items count. Not handled: `#[path]`, `mod x;` inside inline modules, items
made by macros (paths to them land in the file holding the macro call).

As a module (dev-tools/archcheck.py imports it): `Crate(src_dir, externs)` reads a crate,
`.edges(names)` gives its graph, `tarjan` its SCCs. A path that leads to one of the crate names
in `externs` (`palisade_runtime::x`, or `crate::runtime::x` through `pub use palisade_runtime as
runtime`) lands in the node `extern_node(that name)` instead of giving no edge.
"""
import argparse
import re
import sys
from pathlib import Path

IDENT = r"[A-Za-z_]\w*"
VIS = r"(?:pub(?:\s*\([^)]*\))?\s+)?"
TEST_MOD = re.compile(r"#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]\s*(?:#\s*\[[^\]]*\]\s*)*"
                      + VIS + r"mod\s+(" + IDENT + r")\s*([{;])")
MOD_DECL = re.compile(r"(?<![\w:])" + VIS + r"mod\s+(" + IDENT + r")\s*;")
USE_DECL = re.compile(r"(?<![\w:])" + VIS + r"use\s+([^;]*);")
ITEM = re.compile(r"(?<![\w:])" + VIS + r"(?:unsafe\s+|async\s+|const\s+)*"
                  r"(?:struct|enum|union|trait|type|fn|const|static|mod)\s+(" + IDENT + ")")
PATH = re.compile(r"(?<![\w:])(" + IDENT + r"(?:\s*::\s*" + IDENT + r")+)")
TOKEN = re.compile(r"""//[^\n]*|/\*|(?<!\w)b?r(#*)".*?"\1|"(?:\\.|[^"\\])*"|"""
                   r"""'(?:\\.[^']*|[^\\'])'""", re.DOTALL)  # comments, strings, chars
COMMENT_MARK = re.compile(r"/\*|\*/")


def strip(src):
    """Blanks comments (nested too), string, raw string and char literals; keeps newlines."""
    out, pos = [], 0
    while m := TOKEN.search(src, pos):
        end = m.end()
        if m.group() == "/*":
            depth = 1
            for c in COMMENT_MARK.finditer(src, end):
                depth += 1 if c.group() == "/*" else -1
                if depth == 0:
                    end = c.end()
                    break
            else:
                end = len(src)
        out += [src[pos:m.start()], " " + "\n" * src.count("\n", m.start(), end)]
        pos = end
    return "".join(out) + src[pos:]


def drop_test_mods(text):
    """Blanks `#[cfg(test)] mod x { .. }` bodies; returns (text, names of `#[cfg(test)] mod x;`)."""
    test_files = set()
    while m := TEST_MOD.search(text):
        end = m.end()
        if m.group(2) == ";":
            test_files.add(m.group(1))
        else:
            depth = 0
            for end in range(m.end() - 1, len(text)):
                depth += {"{": 1, "}": -1}.get(text[end], 0)
                if depth == 0:
                    break
            end += 1
        text = text[:m.start()] + re.sub(r"[^\n]", " ", text[m.start():end]) + text[end:]
    return text, test_files


def use_tree(tree, prefix=()):
    """Expands `a::{b, c::{self, d as e}, f::*}` into [(segments, alias or None)]."""
    tree = re.sub(r"\s+", " ", re.sub(r"\s*(::|[{},])\s*", r"\1", tree.strip()))
    if tree.startswith("::") and not prefix:
        return []  # `use ::dep::x`: another crate
    brace = tree.find("{")
    if brace < 0:
        m = re.fullmatch(r"(.+?)(?: as (\w+))?", tree)
        path = prefix + tuple(s for s in m.group(1).split("::") if s)
        return [(path[:-1], m.group(2) or path[-2]) if path[-1] == "self" else (path, m.group(2))]
    head = tuple(s for s in tree[:brace].split("::") if s)
    body, parts, depth, start = tree[brace + 1:tree.rfind("}")] + ",", [], 0, 0
    for k, ch in enumerate(body):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(body[start:k])
            start = k + 1
    return [u for p in parts if p.strip() for u in use_tree(p, prefix + head)]


NOT_HERE = object()


def extern_node(crate_name):
    """The node standing for another crate, when `Crate(..., externs)` names it."""
    return ("::" + crate_name,)


class Crate:
    """The module files of a crate, with their `use` lines, top-level item names and text."""

    def __init__(self, src_dir, externs=()):
        self.externs = set(externs)
        src = Path(src_dir)
        root = next((src / f for f in ("lib.rs", "main.rs") if (src / f).exists()), None)
        if root is None:
            sys.exit(f"no lib.rs or main.rs in {src}")
        self.files, self.text, self.uses, self.items = {}, {}, {}, {}
        todo = [((), root, src)]
        while todo:
            mod, path, child_dir = todo.pop()
            self.files[mod] = path
            text, test_files = drop_test_mods(strip(path.read_text(encoding="utf-8")))
            for name in MOD_DECL.findall(text):
                for cand in (child_dir / f"{name}.rs", child_dir / name / "mod.rs"):
                    if name not in test_files and cand.exists():
                        todo.append((mod + (name,), cand, child_dir / name))
                        break
            self.uses[mod] = [u for m in USE_DECL.finditer(text) for u in use_tree(m.group(1))]
            # `pub(in crate::x)` names where an item is visible, not something it uses.
            text = re.sub(r"\bpub\s*\(\s*in\s+[^)]*\)", "pub", text)
            self.text[mod] = USE_DECL.sub(" ", MOD_DECL.sub(" ", text))
            depth, top = 0, set()
            for m in re.finditer(r"[{}]|" + ITEM.pattern, text):
                if m.group(0) in "{}":
                    depth += 1 if m.group(0) == "{" else -1
                elif depth == 0:
                    top.add(m.group(1))
            self.items[mod] = top
        self.unreached = sorted(str(p.relative_to(src)) for p in src.rglob("*.rs")
                                if p not in self.files.values())

    def named(self, mod, name):
        """Paths that `use` lines of `mod` bind to `name` (not globs)."""
        return [p for p, alias in self.uses[mod]
                if p and p[-1] != "*" and (alias or p[-1]) == name]

    def via_use(self, mod, segs, depth):
        """Resolves a path whose first segment is a name imported into `mod` by a `use`."""
        named = self.named(mod, segs[0])
        if named:
            return self.resolve(mod, named[0] + tuple(segs[1:]), depth + 1)
        for path, _ in self.uses[mod]:
            if path and path[-1] == "*":
                glob = self.resolve(mod, path[:-1], depth + 1)
                if glob and glob[1] and glob[0] in self.files and (
                        segs[0] in self.items[glob[0]] or self.named(glob[0], segs[0])
                        or glob[0] + (segs[0],) in self.files):
                    return self.resolve(mod, path[:-1] + tuple(segs), depth + 1)
        return NOT_HERE

    def resolve(self, mod, segs, depth=0):
        """(module the path lands in, whether it names that module itself), or None when the
        path leads out of this crate or is not understood."""
        first, rest = segs[0], tuple(segs[1:])
        if depth > 8:
            return None
        if first == "crate":
            base = ()
        elif first == "self":
            base = mod
        elif first == "super":
            base = mod[:-1]
            while rest and rest[0] == "super":
                base, rest = base[:-1], rest[1:]
        elif mod + (first,) in self.files:
            base = mod + (first,)
        else:
            hit = self.via_use(mod, segs, depth)
            if hit is NOT_HERE:
                return (extern_node(first), not rest) if first in self.externs else None
            return hit
        while rest and base + (rest[0],) in self.files:
            base, rest = base + (rest[0],), rest[1:]
        if rest and rest[0] != "*" and rest[0] not in self.items[base]:
            hit = self.via_use(base, rest, depth)
            if hit is not NOT_HERE:
                return hit
        return base, not rest

    def edges(self, names):
        """{module: {module it depends on: an example path}}."""
        out = {}
        for mod in self.files:
            paths = [p for p, _ in self.uses[mod] if p]
            if names:
                paths += [tuple(re.sub(r"\s+", "", m.group(1)).split("::"))
                          for m in PATH.finditer(self.text[mod])]
            for p in paths:
                hit = self.resolve(mod, p)
                if hit and hit[0] != mod:
                    out.setdefault(mod, {}).setdefault(hit[0], "::".join(p))
        return out


def tarjan(nodes, adj):
    """Strongly connected components, each a list of nodes."""
    index, low, stack, comps = {}, {}, [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in adj.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            at = stack.index(v)
            comps.append(stack[at:])
            del stack[at:]

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return comps


def name(mod):
    return "::".join(mod) or "crate"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src_dir")
    ap.add_argument("--names", action="store_true", help="count every path, not only use lines")
    ap.add_argument("--mermaid", action="store_true", help="print the condensed graph")
    ap.add_argument("--dot", action="store_true", help="print the condensed graph")
    ap.add_argument("--edges", action="store_true", help="list edges, each with a path causing it")
    ap.add_argument("--max-scc", type=int, help="exit 1 when the largest SCC is larger")
    args = ap.parse_args()
    crate = Crate(args.src_dir)
    adj = crate.edges(args.names)
    nodes = sorted(crate.files)
    comps = sorted((sorted(c) for c in tarjan(nodes, adj)), key=lambda c: (-len(c), c))
    print(f"{len(nodes)} modules, {sum(map(len, adj.values()))} edges "
          f"({'names' if args.names else 'use lines'})")
    if crate.unreached:
        print(f"not in this crate's module tree: {', '.join(crate.unreached)}", file=sys.stderr)
    for a in nodes if args.edges else ():
        for b, why in sorted(adj.get(a, {}).items()):
            print(f"  {name(a)} -> {name(b)}  ({why})")
    for c in comps:
        if len(c) > 1:
            print(f"SCC of {len(c)}: {', '.join(map(name, c))}")
    largest = len(comps[0]) if comps else 0
    print(f"largest SCC: {largest}")
    comp_of = {m: i for i, c in enumerate(comps) for m in c}
    cedges = sorted({(comp_of[a], comp_of[b]) for a in adj for b in adj[a]
                     if comp_of[a] != comp_of[b]})
    labels = [name(c[0]) if len(c) == 1 else f"SCC {len(c)}: " + ", ".join(map(name, c))
              for c in comps]
    for on, head, node, edge, tail in (
            (args.mermaid, "```mermaid\ngraph TD", '  c{}["{}"]', "  c{} --> c{}", "```"),
            (args.dot, "digraph modules {\n  node [shape=box];", '  c{} [label="{}"];',
             "  c{} -> c{};", "}")):
        if on:
            print(head, *(node.format(i, t) for i, t in enumerate(labels)),
                  *(edge.format(a, b) for a, b in cedges), tail, sep="\n")
    if args.max_scc is not None and largest > args.max_scc:
        print(f"largest SCC has {largest} modules, more than the allowed {args.max_scc}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
