// The TypeScript lane's tool-shape checks against `buildguard mcp` and a fake
// agent (no JVM): nine tools with output schemas, every result (errors
// included) equal to its text and valid against its schema, a negative
// witness per result, and an argument error in the negotiated version's shape.
// Run by `go test ./harness/clients/` (TestTSToolShapes), which starts the
// fake agent and sets BUILDGUARD_BIN, AGENT_PORT_FILE and LAUNCH_DIR.
import test from "node:test";
import assert from "node:assert/strict";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

import { ToolCaller } from "./checks.mjs";
import { Recorder } from "./evaluation.mjs";

test("ts-sdk tool shapes against the fake agent", { timeout: 60000 }, async () => {
  const { BUILDGUARD_BIN: bin, AGENT_PORT_FILE: portFile, LAUNCH_DIR: cwd } = process.env;
  assert.ok(bin && portFile && cwd, "set BUILDGUARD_BIN, AGENT_PORT_FILE and LAUNCH_DIR");
  const transport = new StdioClientTransport({ command: bin, args: ["mcp", "--port-file", portFile], cwd, stderr: "pipe" });
  let negotiated;
  transport.setProtocolVersion = (v) => (negotiated = v);
  const client = new Client({ name: "buildguard-shape", version: "1" });
  await client.connect(transport, { timeout: 10000 });
  try {
    const rec = new Recorder("ts-sdk-shape");
    const c = new ToolCaller(rec, client);
    c.negotiated = negotiated;
    assert.equal(negotiated, "2025-11-25");
    c.setTools((await client.listTools()).tools);
    const hash = "0".repeat(64);
    await c.call("reclazz_status", {}, "ok");
    await c.call("reclazz_doctor", {}, "ok");
    await c.call("reclazz_scan", {}, "ok");
    await c.call("reclazz_pending", {}, "ok");
    await c.call("reclazz_diagnose", { className: "Service" }, "ok");
    await c.call("reclazz_reload_control", { action: "status" }, "ok");
    await c.call("reclazz_build", { state: "started", owner: "shape" }, "ok");
    await c.call("reclazz_build", { state: "ok", owner: "other" }, "toolError");
    await c.call("reclazz_verify", { className: "Service", sha256: hash }, "toolError");
    await c.call("reclazz_verify_batch", { items: [{ className: "Service", sha256: hash }] }, "toolError");
    await c.call("reclazz_doctor", { portFile: "missing agent.port" }, "toolError");
    await c.call("reclazz_scan", { portFile: "missing agent.port" }, "toolError");
    await c.call("reclazz_build", { state: "invented", owner: "shape" }, "argError");
    assert.equal(rec.witnesses, 12);
    await client.ping();
  } finally {
    await client.close();
  }
});
