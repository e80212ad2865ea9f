// Negative tests of the TypeScript lane's recorder and oracle: each proves a
// way the evaluation can fail, so a pass of the lane means something.
import test from "node:test";
import assert from "node:assert/strict";

import { EXTENSION, Recorder, SCENARIOS } from "./evaluation.mjs";

const H = "a".repeat(64);
const base = { pid: "42", nonce: "n1", sessionId: "s1" };
const receipt = { status: "applied", className: "Service", expectedSha256: H, observedSha256: H, sessionId: "s1" };
const before = { pid: "42", nonce: "n1", counter: 1, value: 1 };
const probe = { pid: "42", nonce: "n1", counter: 2, value: 2 };

function started() {
  const r = new Recorder("t");
  r.setBaseline(base);
  return r;
}

test("the oracle proves a real completion", async () => {
  const r = started();
  await r.run("setup", async () => assert.ok(r.claim("Service", H, 2, receipt, before, probe)));
  assert.equal(r.evaluation({}).summary.completedClaims, 1);
  assert.equal(r.evaluation({}).summary.falseCompletions, 0);
});

test("the oracle rejects a wrong hash, session, class, value, identity or counter", () => {
  const cases = [
    ["hash", { ...receipt, observedSha256: "b".repeat(64) }, probe],
    ["session", { ...receipt, sessionId: "s2" }, probe],
    ["class", { ...receipt, className: "App" }, probe],
    ["status", { ...receipt, status: "mismatch" }, probe],
    ["value", receipt, { ...probe, value: 1 }],
    ["pid", receipt, { ...probe, pid: "43" }],
    ["nonce", receipt, { ...probe, nonce: "n2" }],
    ["counter", receipt, { ...probe, counter: 1 }],
  ];
  for (const [name, rc, p] of cases) {
    assert.equal(started().claim("Service", H, 2, rc, before, p), false, name);
  }
});

test("a false applied claim fails its scenario and counts as a false completion", async () => {
  const r = started();
  await r.run("setup", async () => {});
  await r.run(SCENARIOS[0], async () => {
    r.claim("Service", H, 2, receipt, before, { ...probe, value: 1 });
  });
  const ev = r.evaluation({});
  assert.equal(ev.scenarios[0].status, "failed");
  assert.equal(ev.summary.falseCompletions, 1);
  assert.equal(ev.summary.falseCompletionRate, 1);
  assert.equal(ev.passed, false);
});

test("polls and rejected calls are counted", async () => {
  const r = started();
  await r.run("setup", async () => {
    r.call("reclazz_verify");
    r.call("reclazz_verify");
    r.call("reclazz_build");
  });
  const ev = r.evaluation({});
  assert.equal(ev.summary.toolCalls, 3);
  assert.deepEqual(ev.summary.callsByTool, { reclazz_verify: 2, reclazz_build: 1 });
});

test("a changed identity counts as exactly one restart", async () => {
  const r = started();
  await r.run("setup", async () => {
    r.observe({ pid: "42", nonce: "n1", counter: 1, value: 1 });
    for (let i = 2; i < 5; i++) assert.throws(() => r.observe({ pid: "99", nonce: "n9", counter: i, value: 1 }), /JVM changed/);
  });
  assert.equal(r.evaluation({}).summary.restarts, 1);
});

test("a setup failure never turns unrun scenarios into success", async () => {
  const r = started();
  await r.run("setup", async () => {
    throw new Error("no JVM");
  });
  for (const s of [...SCENARIOS, EXTENSION]) await r.run(s, async () => {});
  const ev = r.evaluation({});
  assert.equal(ev.passed, false);
  assert.equal(ev.complete, false);
  assert.equal(ev.summary.succeeded, 0);
  assert.equal(ev.summary.notRun, SCENARIOS.length);
  assert.equal(ev.summary.planned, SCENARIOS.length);
  assert.match(ev.error, /^setup: no JVM/);
});
