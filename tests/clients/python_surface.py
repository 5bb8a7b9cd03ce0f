"""A real MCP client against Palisade's whole surface: the official Python SDK's ClientSession
over stdio, with a roots callback, against the notes, prompts and files plugins.

Usage: python_surface.py PALISADE_BIN CONFIG CACHE_DIR NOTES_DIR ROOT_DIR SECOND_ROOT_DIR
  CONFIG serves notes (NOTES_DIR at /notes), prompts, and files (roots read-only);
  ROOT_DIR holds hello.txt, SECOND_ROOT_DIR holds other.txt.
Prints one line per check and exits non-zero on the first failure.
"""

import asyncio
import os
import sys
import time

import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def root(path: str, name: str) -> types.Root:
    return types.Root(uri=f"file://{path}", name=name)


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def main(binary: str, config: str, cache: str, notes: str, root_dir: str, second_dir: str) -> None:
    roots = [root(root_dir, "project")]
    asked = []

    async def list_roots(context) -> types.ListRootsResult:
        asked.append(context.request_id)
        return types.ListRootsResult(roots=list(roots))

    params = StdioServerParameters(
        command=binary,
        args=["serve", "--config", config, "--cache-dir", cache],
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, list_roots_callback=list_roots) as session:
            init = await session.initialize()
            caps = init.capabilities
            print("negotiated", init.protocol_version, "with", init.server_info.name)
            assert caps.resources is not None and caps.prompts is not None, caps
            assert caps.completions is not None and caps.tools is not None, caps

            resources = await session.list_resources()
            uris = sorted(r.uri for r in resources.resources)
            print("resources", uris)
            assert uris == ["notes://recipes", "notes://todo", "notes://welcome"], uris
            welcome = next(r for r in resources.resources if r.uri == "notes://welcome")
            assert welcome.mime_type == "text/markdown", welcome

            templates = await session.list_resource_templates()
            shapes = [t.uri_template for t in templates.resource_templates]
            print("templates", shapes)
            assert shapes == ["notes://{name}"], shapes

            read = await session.read_resource("notes://welcome")
            contents = read.contents
            with open(os.path.join(notes, "welcome.md"), encoding="utf-8") as f:
                expected = f.read()
            assert len(contents) == 1 and isinstance(contents[0], types.TextResourceContents), contents
            assert contents[0].text == expected, contents[0].text
            print("read notes://welcome ->", contents[0].text.splitlines()[0])

            prompts = await session.list_prompts()
            names = sorted(p.name for p in prompts.prompts)
            print("prompts", names)
            for name in ["prompts_code_review", "prompts_commit_message", "prompts_summarize"]:
                assert name in names, names
            review = next(p for p in prompts.prompts if p.name == "prompts_code_review")
            args = {a.name: a.required for a in review.arguments or []}
            assert args == {"code": True, "language": False}, args

            code = "fn main() {\n    println!(\"hi\");\n}\n"
            prompt = await session.get_prompt("prompts_code_review", {"code": code, "language": "Rust"})
            first, attached = prompt.messages[0], prompt.messages[1]
            assert first.role == "user" and isinstance(first.content, types.TextContent), first
            assert "Rust code" in first.content.text, first.content.text
            assert isinstance(attached.content, types.EmbeddedResource), attached
            assert attached.content.resource.text == code, attached.content.resource
            print("code_review ->", prompt.description)

            prompt = await session.get_prompt("prompts_describe_image")
            image = prompt.messages[0].content
            assert isinstance(image, types.ImageContent) and image.mime_type == "image/png", image
            print("describe_image ->", image.mime_type)

            done = await session.complete(
                types.PromptReference(name="prompts_code_review"),
                {"name": "language", "value": "Ja"},
            )
            print("complete language 'Ja' ->", done.completion.values)
            assert done.completion.values == ["Java", "JavaScript"], done.completion

            done = await session.complete(
                types.ResourceTemplateReference(uri="notes://{name}"),
                {"name": "name", "value": "we"},
            )
            print("complete note 'we' ->", done.completion.values)
            assert done.completion.values == ["welcome"], done.completion

            listed = await session.call_tool("files_list_roots", {})
            print("list_roots ->", text_of(listed))
            assert not listed.is_error, listed
            guest_paths = [r["guest_path"] for r in listed.structured_content["roots"]]
            # Plugins see a root at the very path the client named.
            assert guest_paths == [root_dir], listed.structured_content
            assert asked, "the server never asked roots/list"

            result = await session.call_tool("files_read_file", {"path": f"{root_dir}/hello.txt"})
            print("read_file in the root ->", text_of(result).strip())
            assert not result.is_error and text_of(result) == "hello from the client's root\n", result

            result = await session.call_tool("files_read_file", {"path": f"{root_dir}/../../etc/passwd"})
            print("read_file outside ->", text_of(result).splitlines()[0])
            assert result.is_error, result

            # The client changes its roots and says so; the server asks again.
            roots[:] = [root(second_dir, "second")]
            before = len(asked)
            await session.send_roots_list_changed()
            deadline = time.monotonic() + 30
            while True:
                listed = await session.call_tool("files_list_roots", {})
                paths = [r["guest_path"] for r in listed.structured_content["roots"]]
                if paths == [second_dir]:
                    break
                assert time.monotonic() < deadline, f"roots never changed: {paths}"
                await asyncio.sleep(0.05)
            assert len(asked) > before, asked
            print("roots after list_changed ->", [os.path.basename(p) for p in paths])
            result = await session.call_tool("files_read_file", {"path": f"{second_dir}/other.txt"})
            assert not result.is_error and "second root" in text_of(result), result
            result = await session.call_tool("files_read_file", {"path": f"{root_dir}/hello.txt"})
            assert result.is_error, result

            await session.send_ping()
            print("surface ok")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:7]))
