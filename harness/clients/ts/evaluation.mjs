// The evaluation recorder of the TypeScript lane: the same evaluation.json
// shape as the Go lanes (harness/clients/evaluation.go). A failed step leaves
// every later one not_run; a completion counts only when the oracle proves it.

export const SCENARIOS = ["successful-reload", "mixed-batch", "failed-build-hold", "recovery", "stale-receipt", "unavailable-target", "malformed-input", "safe-build-progress", "safe-build-cancel", "concurrent-safe-builds"];
export const EXTENSION = "pause-resume";

export class Recorder {
  constructor(lane) {
    this.lane = lane;
    this.start = Date.now();
    this.rows = new Map();
    for (const n of ["setup", ...SCENARIOS, EXTENSION]) {
      this.rows.set(n, { name: n, status: "not_run", elapsedMs: 0, toolCalls: 0, callsByTool: {}, observations: 0, restarts: 0, completionChecks: [] });
    }
    this.current = null;
    this.failed = false;
    this.firstError = null;
    this.baseline = null;
    this.last = null;
    this.witnesses = 0;
  }

  async run(name, step) {
    const row = this.rows.get(name);
    if (this.failed) return;
    this.current = row;
    const t0 = Date.now();
    let err = null;
    try {
      await step();
    } catch (e) {
      err = e;
    }
    row.elapsedMs = Date.now() - t0;
    if (!err) {
      const bad = row.completionChecks.find((c) => !c.proven);
      if (bad) err = new Error(`false completion: ${bad.className} ${bad.expectedSha256 ?? ""}: ${bad.problems.join("; ")}`);
    }
    if (err) {
      row.status = "failed";
      row.error = String(err.message ?? err);
      this.failed = true;
      this.firstError = `${name}: ${row.error}`;
    } else {
      row.status = "passed";
    }
    this.current = null;
  }

  call(tool) {
    if (!this.current) return;
    this.current.toolCalls++;
    this.current.callsByTool[tool] = (this.current.callsByTool[tool] ?? 0) + 1;
  }

  witness() {
    this.witnesses++;
  }

  setBaseline(id) {
    this.baseline = id;
  }

  // observe records one probe; a changed identity counts as exactly one restart.
  observe(p) {
    if (this.current) this.current.observations++;
    const prev = this.last;
    this.last = p;
    if (!this.baseline) throw new Error("probe before the baseline identity was taken");
    if (p.pid !== this.baseline.pid || p.nonce !== this.baseline.nonce) {
      if (!prev || prev.pid !== p.pid || prev.nonce !== p.nonce) {
        if (this.current) this.current.restarts++;
      }
      throw new Error(`the JVM changed: pid ${p.pid} nonce ${p.nonce}, baseline pid ${this.baseline.pid} nonce ${this.baseline.nonce}`);
    }
    if (prev && prev.pid === p.pid && prev.nonce === p.nonce && p.counter <= prev.counter) {
      throw new Error(`the Service counter did not rise (${p.counter} after ${prev.counter})`);
    }
  }

  // claim is the oracle: applied receipt with class, both hashes and the
  // baseline session, and a probe with the same pid and nonce, a higher
  // counter and the expected value.
  claim(className, hash, value, receipt, before, probe) {
    const problems = [];
    if (receipt?.status !== "applied") problems.push(`receipt status ${receipt?.status}, not applied`);
    if (receipt?.className !== className) problems.push(`receipt class ${receipt?.className}`);
    if (receipt?.expectedSha256 !== hash || receipt?.observedSha256 !== hash) problems.push(`receipt hashes ${receipt?.expectedSha256}/${receipt?.observedSha256}, want ${hash}`);
    if (!this.baseline) problems.push("no baseline identity");
    else {
      if (receipt?.sessionId !== this.baseline.sessionId) problems.push(`receipt session ${receipt?.sessionId}, baseline ${this.baseline.sessionId}`);
      if (probe.pid !== this.baseline.pid || probe.nonce !== this.baseline.nonce) problems.push("probe identity differs from the baseline");
    }
    if (!(probe.counter > before.counter)) problems.push(`probe counter ${probe.counter} not above ${before.counter}`);
    if (probe.value !== value) problems.push(`probe value ${probe.value}, want ${value}`);
    const proven = problems.length === 0;
    this.current?.completionChecks.push({ className, expectedSha256: hash, expectedValue: value, receipt, probe, proven, ...(proven ? {} : { problems }) });
    return proven;
  }

  falseClaim(tool, detail) {
    this.current?.completionChecks.push({ className: tool, proven: false, problems: [detail] });
  }

  evaluation(metadata) {
    const rows = [...this.rows.values()].map((r) => structuredClone(r));
    const scen = rows.filter((r) => SCENARIOS.includes(r.name));
    const s = { planned: SCENARIOS.length, succeeded: 0, failed: 0, notRun: 0, successRate: 0, completedClaims: 0, falseCompletions: 0, falseCompletionRate: null, restarts: 0, identityObservations: 0, toolCalls: 0, callsByTool: {}, negativeWitnesses: this.witnesses, elapsedMs: Date.now() - this.start };
    for (const r of rows) {
      s.toolCalls += r.toolCalls;
      for (const [k, v] of Object.entries(r.callsByTool)) s.callsByTool[k] = (s.callsByTool[k] ?? 0) + v;
      s.identityObservations += r.observations;
      s.restarts += r.restarts;
      for (const c of r.completionChecks) {
        if (c.receipt || !c.proven) s.completedClaims++;
        if (!c.proven) s.falseCompletions++;
      }
    }
    for (const r of scen) {
      if (r.status === "passed") s.succeeded++;
      else if (r.status === "failed") s.failed++;
      else s.notRun++;
    }
    s.successRate = s.succeeded / s.planned;
    if (s.completedClaims > 0) s.falseCompletionRate = s.falseCompletions / s.completedClaims;
    const setup = rows.find((r) => r.name === "setup");
    const extension = rows.find((r) => r.name === EXTENSION);
    const ev = {
      schemaVersion: 1,
      kind: "deterministic-workflow",
      lane: this.lane,
      metadata,
      passed: setup.status === "passed" && s.succeeded === s.planned && extension.status === "passed" && s.falseCompletions === 0 && !this.firstError,
      complete: s.notRun === 0,
      summary: s,
      setup,
      scenarios: scen,
      extension,
    };
    if (this.firstError) ev.error = this.firstError;
    return ev;
  }
}

