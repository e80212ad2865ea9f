// The TypeScript SDK's own task client (its experimental tasks API, the
// 2025-11-25 form: SEP-1686) against `buildguard mcp` and a fake agent, in a
// project whose builds are shell scripts (docs/decisions.md#D17):
// reclazz_safe_build, and only it, offers tasks; callToolStream creates the
// task, polls it and reads the safe build's final result through
// tasks/result; a failed build is a failed task whose tasks/result is the
// isError result; cancelTask stops a hanging build; listTasks lists the
// session's tasks.
//
// Run by `go test ./harness/clients/` (TestTSTasks2025), which writes the
// project, starts the fake agent and sets BUILDGUARD_BIN, AGENT_PORT_FILE,
// PROJECT_DIR and CLIENT_TRANSPORT (stdio or http).
import test from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import path from "node:path";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

const HTTP = process.env.CLIENT_TRANSPORT === "http";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// within settles as p does, or rejects with what after ms; its timer never
// keeps node running.
function within(p, ms, what) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

// startHTTPServer starts `buildguard mcp ARGS --http 127.0.0.1:0 --url-file F`
// and waits at most 15 s for the URL; stop() sends SIGTERM and waits at
// most 5 s for exit 0.
async function startHTTPServer(bin, args, cwd, urlFile) {
  const child = spawn(bin, [...args, "--http", "127.0.0.1:0", "--url-file", urlFile], { cwd, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (b) => (stderr += b));
  const exited = once(child, "exit");
  const deadline = Date.now() + 15000;
  for (;;) {
    try {
      const t = fs.readFileSync(urlFile, "utf8");
      if (t.endsWith("\n")) {
        return {
          url: t.trim(),
          async stop() {
            child.kill("SIGTERM");
            try {
              await within(exited, 5000, "buildguard mcp --http exited after SIGTERM");
            } catch (e) {
              child.kill("SIGKILL");
              throw e;
            }
            assert.equal(child.exitCode, 0, `buildguard mcp --http exits 0 on SIGTERM: ${stderr}`);
          },
        };
      }
    } catch {}
    if (child.exitCode !== null) throw new Error(`buildguard mcp --http exited before serving: ${stderr}`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error("buildguard mcp --http wrote no URL within 15 s");
    }
    await sleep(10);
  }
}

// collect runs callToolStream to its end (at most 60 s) and returns its
// messages; onMessage sees each as it comes.
async function collect(client, params, onMessage) {
  const messages = [];
  const run = (async () => {
    for await (const m of client.experimental.tasks.callToolStream(params, CallToolResultSchema, { timeout: 30000 })) {
      messages.push(m);
      await onMessage?.(m);
    }
  })();
  await within(run, 60000, `callToolStream of ${params.name} ended`);
  return messages;
}

test(`ts-sdk tasks (2025-11-25) over ${HTTP ? "http" : "stdio"}`, { timeout: 180000 }, async () => {
  const { BUILDGUARD_BIN: bin, AGENT_PORT_FILE: portFile, PROJECT_DIR: project } = process.env;
  assert.ok(bin && portFile && project, "set BUILDGUARD_BIN, AGENT_PORT_FILE and PROJECT_DIR");
  const args = ["mcp", "--port-file", portFile];
  let server;
  let transport;
  if (HTTP) {
    server = await startHTTPServer(bin, args, project, path.join(project, "..", "mcp-url"));
    transport = new StreamableHTTPClientTransport(new URL(server.url));
  } else {
    transport = new StdioClientTransport({ command: bin, args, cwd: project, stderr: "pipe" });
  }
  let negotiated;
  const set = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (v) => {
    negotiated = v;
    set?.(v);
  };
  const client = new Client({ name: "buildguard-ts-tasks", version: "1" });
  await client.connect(transport, { timeout: 10000 });
  try {
    assert.equal(negotiated, "2025-11-25");
    assert.deepEqual(client.getServerCapabilities().tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const tools = (await client.listTools()).tools;
    for (const t of tools) {
      assert.deepEqual(t.execution, t.name === "reclazz_safe_build" ? { taskSupport: "optional" } : undefined, t.name);
    }

    // A build that succeeds: the task is created, polled, and its result read.
    const ok = await collect(client, { name: "reclazz_safe_build", arguments: { build: "ok" } });
    const kinds = ok.map((m) => m.type);
    assert.equal(kinds[0], "taskCreated", JSON.stringify(kinds));
    assert.equal(ok[0].task.status, "working");
    assert.ok(kinds.includes("taskStatus"), "the SDK polled tasks/get");
    const last = ok.at(-1);
    assert.equal(last.type, "result", JSON.stringify(last));
    assert.equal(last.result.isError, false);
    assert.equal(last.result.structuredContent.outcome, "ok", JSON.stringify(last.result.structuredContent));
    assert.equal(last.result.content[0].text, JSON.stringify(last.result.structuredContent), "the result's text is its structuredContent");
    assert.equal(last.result._meta["io.modelcontextprotocol/related-task"].taskId, ok[0].task.taskId);
    const okTask = await client.experimental.tasks.getTask(ok[0].task.taskId);
    assert.equal(okTask.status, "completed");

    // A build that fails: a failed task; tasks/result is the tool's isError result.
    const failed = await collect(client, { name: "reclazz_safe_build", arguments: { build: "fail" } });
    assert.equal(failed[0].type, "taskCreated");
    assert.equal(failed.at(-1).type, "error", JSON.stringify(failed.at(-1)));
    const failedId = failed[0].task.taskId;
    assert.equal((await client.experimental.tasks.getTask(failedId)).status, "failed");
    const failedResult = await client.experimental.tasks.getTaskResult(failedId, CallToolResultSchema);
    assert.equal(failedResult.isError, true);
    assert.equal(failedResult.structuredContent.outcome, "failed", JSON.stringify(failedResult.structuredContent));

    // A hanging build, cancelled once it runs.
    let hangId;
    const hang = await collect(client, { name: "reclazz_safe_build", arguments: { build: "hang" } }, async (m) => {
      if (m.type !== "taskCreated") return;
      hangId = m.task.taskId;
      const deadline = Date.now() + 20000;
      while (!fs.existsSync(path.join(project, "pids"))) {
        assert.ok(Date.now() < deadline, "the hanging build started within 20 s");
        await sleep(20);
      }
      const cancelled = await client.experimental.tasks.cancelTask(hangId);
      assert.equal(cancelled.status, "cancelled");
    });
    assert.equal(hang.at(-1).type, "error", JSON.stringify(hang.at(-1)));
    assert.match(hang.at(-1).error.message, /was cancelled/);
    const hangResult = await client.experimental.tasks.getTaskResult(hangId, CallToolResultSchema);
    assert.equal(hangResult.isError, true, JSON.stringify(hangResult));
    await assert.rejects(client.experimental.tasks.cancelTask(hangId), /terminal status cancelled/);

    const listed = (await client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
    assert.deepEqual(listed, [ok[0].task.taskId, failedId, hangId]);

    // Without the task API the call is synchronous.
    const sync = await client.callTool({ name: "reclazz_status", arguments: {} });
    assert.ok(sync.structuredContent, "reclazz_status answers synchronously");
  } finally {
    await client.close();
    await server?.stop();
  }
});
