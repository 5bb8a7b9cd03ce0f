// A real MCP client against Palisade: the official TypeScript SDK (@modelcontextprotocol/sdk),
// over stdio or Streamable HTTP, with the example configuration (hello, files, notes, prompts, textkit-py, textkit-js).
//
// Usage: node ts_sdk.mjs stdio PALISADE_BIN CONFIG CACHE_DIR
//        node ts_sdk.mjs http URL
// Prints one line per check and exits non-zero on the first failure.

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, ...rest] = process.argv.slice(2);
const transport =
  mode === "stdio"
    ? new StdioClientTransport({
        command: rest[0],
        args: ["serve", "--no-watch", "--config", rest[1], "--cache-dir", rest[2]],
        stderr: "ignore",
      })
    : new StreamableHTTPClientTransport(new URL(rest[0]));

const client = new Client({ name: "palisade-ts-test", version: "1.0.0" });
await client.connect(transport);
const server = client.getServerVersion();
console.log("connected to", server.name, "over", mode);
assert.equal(server.name, "palisade");

const tools = (await client.listTools()).tools.map((t) => t.name);
console.log("tools", tools.join(" "));
assert.ok(tools.includes("hello_greet") && tools.includes("notes_add_note"), tools);

const greeting = await client.callTool({ name: "hello_greet", arguments: { name: "TypeScript" } });
console.log("greet ->", greeting.content[0].text);
assert.equal(greeting.content[0].text, "Hello, TypeScript!");
// The same tool written in Python and in JavaScript (plugins/textkit-py, plugins/textkit-js).
for (const plugin of ["textkit-py", "textkit-js"]) {
  const r = await client.callTool({ name: `${plugin}_greet`, arguments: { name: "TypeScript", excited: true } });
  console.log(`${plugin}_greet ->`, r.content[0].text);
  assert.equal(r.content[0].text, "Hello, TypeScript!!!");
}

const resources = (await client.listResources()).resources.map((r) => r.uri);
console.log("resources", resources.join(" "));
assert.deepEqual(resources, [
  "notes://recipes", "notes://todo", "notes://welcome", "textkit-js://about", "textkit-py://about",
  "ui://weather/forecast",
]);
const templates = (await client.listResourceTemplates()).resourceTemplates;
assert.equal(templates[0].uriTemplate, "notes://{name}");
const welcome = await client.readResource({ uri: "notes://welcome" });
console.log("read notes://welcome:", welcome.contents[0].text.split("\n")[0]);
assert.match(welcome.contents[0].text, /^# Welcome/);

const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
console.log("prompts", prompts.join(" "));
assert.ok(prompts.includes("prompts_code_review"), prompts);
const review = await client.getPrompt({
  name: "prompts_code_review",
  arguments: { code: "fn main() {}", language: "Rust" },
});
assert.equal(review.messages[1].content.type, "resource");
assert.equal(review.messages[1].content.resource.text, "fn main() {}");
const completion = await client.complete({
  ref: { type: "ref/prompt", name: "prompts_code_review" },
  argument: { name: "language", value: "Ja" },
});
console.log("complete language 'Ja' ->", completion.completion.values.join(", "));
assert.deepEqual(completion.completion.values, ["Java", "JavaScript"]);

let bad;
try {
  await client.getPrompt({ name: "prompts_code_review", arguments: {} });
} catch (e) {
  bad = e;
}
assert.ok(bad && /code/.test(bad.message), "a missing argument must be refused");
console.log("missing argument refused:", bad.message);

await client.close();
console.log("ok");
