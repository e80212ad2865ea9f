// The per-call checks of the TypeScript lane, shared by acceptance.test.mjs
// (live JVM) and shape.test.mjs (fake agent): structuredContent equals the
// JSON text, the SDK's own validator accepts it against the tool's output
// schema (error results included, which the SDK itself skips), a copy with
// the first required field deleted is rejected (a negative witness), and
// no result ever claims reloadConfirmed:true.
import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";

import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";

export const TOOLS = ["reclazz_build", "reclazz_diagnose", "reclazz_doctor", "reclazz_pending", "reclazz_reload_control", "reclazz_safe_build", "reclazz_scan", "reclazz_status", "reclazz_verify", "reclazz_verify_batch"];
const CALL_TIMEOUT_MS = 15000;

export class ToolCaller {
  // rec is a Recorder (evaluation.mjs); client a connected SDK Client.
  constructor(rec, client) {
    this.rec = rec;
    this.client = client;
    this.validators = new Map();
    this.required = new Map();
    this.results = [];
    this.called = {};
    this.n = 0;
    this.negotiated = undefined;
  }

  // setTools checks tools/list (the ten, each with outputSchema and
  // annotations) and compiles the schemas with the SDK's validator.
  setTools(tools) {
    assert.deepEqual(tools.map((t) => t.name).sort(), TOOLS);
    const validator = new AjvJsonSchemaValidator();
    for (const t of tools) {
      assert.ok(t.outputSchema, `${t.name} advertises an outputSchema`);
      assert.ok(t.annotations, `${t.name} advertises annotations`);
      assert.ok(Array.isArray(t.outputSchema.required) && t.outputSchema.required.length > 0, `${t.name} schema has required fields`);
      this.validators.set(t.name, validator.getValidator(t.outputSchema));
      this.required.set(t.name, t.outputSchema.required);
    }
    this.tools = tools.map((t) => t.name).sort();
  }

  // call runs one tool call and applies every per-call check. want is "ok",
  // "toolError", "either" or "argError"; options are the SDK's request
  // options (onprogress, signal) added to the call's timeout.
  async call(tool, args, want, options = {}) {
    const n = ++this.n;
    const where = `call #${n} ${tool}`;
    this.rec.call(tool);
    this.called[tool] = (this.called[tool] ?? 0) + 1;
    let res;
    try {
      res = await this.client.callTool({ name: tool, arguments: { timeoutMs: "3000", ...args } }, undefined, { timeout: CALL_TIMEOUT_MS, ...options });
    } catch (e) {
      if (options.signal?.aborted) throw e;
      if (want === "argError" && e.code === -32602) {
        this.results.push({ name: tool, isError: true, rpcCode: e.code, text: e.message });
        return { message: e.message };
      }
      throw new Error(`${where}: ${e.message}`);
    }
    const texts = res.content.filter((c) => c.type === "text").map((c) => c.text);
    this.results.push({ name: tool, isError: !!res.isError, data: res.structuredContent, text: texts[0] });
    if (want === "argError") {
      // 2025-11-25 (SEP-1303, docs/decisions.md#D5): an argument error is a tool error with one
      // text block and no structuredContent.
      if (this.negotiated >= "2025-11-25" && res.isError === true && texts.length === 1 && res.structuredContent === undefined) return { message: texts[0] };
      throw new Error(`${where}: want an argument error, got ${JSON.stringify(res)}`);
    }
    if (texts.length !== 1) throw new Error(`${where}: ${texts.length} text blocks, want 1`);
    if (want === "ok" && res.isError) throw new Error(`${where}: isError, want success: ${texts[0]}`);
    if (want === "toolError" && !res.isError) throw new Error(`${where}: success, want isError: ${texts[0]}`);
    const data = res.structuredContent;
    if (data === undefined) throw new Error(`${where}: no structuredContent in a ${this.negotiated} session`);
    let parsed;
    try {
      parsed = JSON.parse(texts[0]);
    } catch (e) {
      throw new Error(`${where}: text is not JSON: ${e.message}`);
    }
    if (!isDeepStrictEqual(parsed, data)) throw new Error(`${where}: structuredContent differs from its JSON text`);
    // The SDK validates only non-error results itself; validate every one.
    const validate = this.validators.get(tool);
    const verdict = validate(data);
    if (!verdict.valid) throw new Error(`${where}: output schema rejects the result: ${verdict.errorMessage}`);
    const field = this.required.get(tool)[0];
    const mutated = structuredClone(data);
    delete mutated[field];
    if (validate(mutated).valid) throw new Error(`${where}: the output schema accepts the result without required ${field}`);
    this.rec.witness();
    if (data.reloadConfirmed === true) {
      this.rec.falseClaim(tool, "reloadConfirmed:true");
      throw new Error(`${where}: false completion: reloadConfirmed is true`);
    }
    return data;
  }
}
