// The official TypeScript SDK (@modelcontextprotocol/sdk, its experimental tasks API) driving
// tasks against Palisade over Streamable HTTP, in a 2025-11-25 session: a call that outlives the
// plugin's per-call time limit, run as a task and streamed to its result; a task whose plugin
// asks a question, answered by the client's elicitation handler on the tasks/result stream; a
// spinning task cancelled; the caller's tasks listed.
//
// Usage: node ts_tasks.mjs URL
// Prints one line per check and `ok` at the end; exits non-zero on the first failure.

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const client = new Client(
  { name: "palisade-ts-tasks", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} } } },
);
const questions = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  questions.push(request.params._meta?.["io.modelcontextprotocol/related-task"]?.taskId);
  return { action: "accept", content: { decision: `answer ${questions.length}` } };
});
await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2])));
assert.ok(client.getServerCapabilities().tasks?.requests?.tools?.call, "tasks capability");
const tools = (await client.listTools()).tools;
const sleep = tools.find((t) => t.name === "misbehave_sleep");
assert.equal(sleep.execution?.taskSupport, "optional");

// The stream creates the task (the tool is marked optional), polls it, and fetches the result.
const seen = [];
let result;
for await (const message of client.experimental.tasks.callToolStream(
  { name: "misbehave_sleep", arguments: { ms: 1500 } },
  CallToolResultSchema,
  { task: { ttl: 60000 } },
)) {
  seen.push(message.type);
  if (message.type === "result") result = message.result;
  if (message.type === "error") throw message.error;
}
console.log("sleep as a task:", seen.join(" "), "->", result.content[0].text);
assert.equal(seen[0], "taskCreated");
assert.equal(result.content[0].text, "slept 1500 ms");

// A task that asks twice: the SDK answers each question on the tasks/result stream.
seen.length = 0;
let created;
for await (const message of client.experimental.tasks.callToolStream(
  { name: "misbehave_ask_twice", arguments: { key: "cats" } },
  CallToolResultSchema,
  { task: { ttl: 60000 } },
)) {
  seen.push(message.type);
  if (message.type === "taskCreated") created = message.task.taskId;
  if (message.type === "result") result = message.result;
  if (message.type === "error") throw message.error;
}
console.log("ask_twice as a task:", seen.join(" "), "->", result.content[0].text);
assert.deepEqual(questions, [created, created]);
assert.equal(
  result.content[0].text,
  'answered: Some(String("answer 1")), Some(String("answer 2"))',
);

// A spinning task, cancelled; then the caller's tasks, listed.
const spin = await client.request(
  { method: "tools/call", params: { name: "misbehave_spin", arguments: {} } },
  CreateTaskResultSchema,
  { task: { ttl: 60000 } },
);
const cancelled = await client.experimental.tasks.cancelTask(spin.task.taskId);
console.log("spin cancelled:", cancelled.status);
assert.equal(cancelled.status, "cancelled");
const listed = (await client.experimental.tasks.listTasks()).tasks.map((t) => t.status);
console.log("tasks listed:", listed.join(" "));
assert.deepEqual(listed.sort(), ["cancelled", "completed", "completed"]);

await client.close();
console.log("ok");
