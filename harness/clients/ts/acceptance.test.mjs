// The TypeScript SDK lane of buildguard's MCP client acceptance matrix
// (docs/build-safety.md#4, harness/clients). It is independent of the Go lanes:
// it writes and compiles its own consumer app, starts the JVM with the agent,
// starts `buildguard mcp --project-dir <project> --port-file agent.port` from
// an unrelated directory through the official SDK's StdioClientTransport
// (or, with CLIENT_TRANSPORT=http, adds `--http 127.0.0.1:0 --url-file F` and
// connects its StreamableHTTPClientTransport to the printed URL,
// docs/http.md), makes every MCP call and assertion itself, and writes
// evaluation.json (always) and evidence.json (only on a full pass) into
// CLIENT_WORK_DIR.
//
// Environment: BUILDGUARD_BIN (the binary), BUILDGUARD_AGENT_JAR (the agent
// jar), CLIENT_WORK_DIR (a fresh directory; it must not exist), CLIENT_LANE
// (the lane's name, default ts-sdk), CLIENT_TRANSPORT (stdio or http).
// Run by `go tool mage clients`, or:  node --test acceptance.test.mjs

import { fileURLToPath } from "node:url";
import test from "node:test";
import assert from "node:assert/strict";
import { spawn, execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { once } from "node:events";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { promisify } from "node:util";
import os from "node:os";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { TOOLS, ToolCaller } from "./checks.mjs";
import { EXTENSION, Recorder, SCENARIOS } from "./evaluation.mjs";

const run = promisify(execFile);

const LANE = process.env.CLIENT_LANE || "ts-sdk";
const HTTP = process.env.CLIENT_TRANSPORT === "http";
const URL_LINE = /^buildguard mcp: serving MCP over streamable HTTP at (http:\/\/127\.0\.0\.1:[0-9]+\/mcp\?token=[A-Za-z0-9_-]+)\n/;

// startHTTPServer starts `buildguard mcp ARGS --http 127.0.0.1:0 --url-file`
// and waits (at most 15 s) for the URL, which must also be its one stderr
// line; stop() sends SIGTERM and requires exit 0 within 5 s.
async function startHTTPServer(bin, args, cwd, urlFile) {
  const child = spawn(bin, [...args, "--http", "127.0.0.1:0", "--url-file", urlFile], { cwd, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  let stdout = "";
  child.stderr.on("data", (b) => (stderr += b));
  child.stdout.on("data", (b) => (stdout += b));
  const exited = once(child, "exit");
  const deadline = Date.now() + 15000;
  let url;
  for (;;) {
    try {
      const t = fs.readFileSync(urlFile, "utf8");
      // The line on stderr comes through a pipe read apart from the
      // file: both are waited for.
      if (t.endsWith("\n") && stderr.includes("\n")) {
        url = t.trim();
        break;
      }
    } catch {}
    if (child.exitCode !== null) throw new Error(`buildguard mcp --http exited before serving: ${stderr}`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`buildguard mcp --http wrote no URL and no stderr line within 15 s: ${JSON.stringify(stderr)}`);
    }
    await sleep(10);
  }
  const m = URL_LINE.exec(stderr);
  assert.ok(m && m[1] === url, `stderr starts with the URL line of --url-file: ${JSON.stringify(stderr)}`);
  return {
    url,
    stderr: () => stdout + stderr.replace(URL_LINE, ""),
    async stop() {
      child.kill("SIGTERM");
      const timer = sleep(5000).then(() => "timeout");
      const r = await Promise.race([exited, timer]);
      if (r === "timeout") {
        child.kill("SIGKILL");
        throw new Error("buildguard mcp --http still ran 5 s after SIGTERM");
      }
      assert.equal(child.exitCode, 0, "buildguard mcp --http exits 0 on SIGTERM");
    },
  };
}
const OWNER = "sdk-owner";
const OTHER_OWNER = "other-owner";
const RECEIPT_POLL_MS = 15000;
const HELD_MS = 1600;
const READY_MS = 30000;
const PROBE_MS = 5000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const sha256 = (file) => createHash("sha256").update(fs.readFileSync(file)).digest("hex");

// ---- the consumer app ----

// The Java sources are shared with the Go lanes (harness/clients/app).
const appDir = fileURLToPath(new URL("../app/", import.meta.url));
const readSource = (name) => fs.readFileSync(path.join(appDir, name), "utf8");
const serviceTemplate = readSource("Service.java.template");
const serviceSource = (value) => serviceTemplate.replace("VALUE", String(value));
const appSource = readSource("App.java");
const brokenSource = readSource("Broken.java");

class Project {
  constructor(root) {
    this.root = root;
    this.src = path.join(root, "src");
    this.classes = path.join(root, "classes");
    fs.mkdirSync(this.src, { recursive: true });
    fs.mkdirSync(this.classes, { recursive: true });
  }
  async javac(...files) {
    return run("javac", ["--release", "17", "-encoding", "UTF-8", "-implicit:none", "-sourcepath", "", "-cp", this.classes, "-d", this.classes, ...files], { cwd: this.src, timeout: 120000 });
  }
  writeService(value) {
    fs.writeFileSync(path.join(this.src, "Service.java"), serviceSource(value));
  }
  async compileService() {
    await this.javac("Service.java");
    return this.sha("Service");
  }
  async compileBroken() {
    fs.writeFileSync(path.join(this.src, "Broken.java"), brokenSource);
    try {
      await this.javac("Broken.java");
    } catch (e) {
      const out = `${e.stdout ?? ""}${e.stderr ?? ""}`;
      assert.match(out, /missingSymbol/, "javac must fail on missingSymbol");
      return out;
    }
    throw new Error("Broken.java compiled, but it must fail with a real compiler error");
  }
  removeBroken() {
    fs.rmSync(path.join(this.src, "Broken.java"), { force: true });
  }
  sha(name) {
    return sha256(path.join(this.classes, `${name}.class`));
  }
  // writeBuildConfig names three builds in .buildguard.json
  // (docs/safe-build.md#2): "compile" compiles Service.java; "slow"
  // compiles it, records its pid in build.pid, prints "waiting" and runs
  // until it is stopped; "turn" compiles it between a "start PID" and an
  // "end PID" line, printed and appended to builds.log, inside a mkdir
  // guard (an overlapping turn build prints "overlap" and fails; the same
  // script as harness/clients/safebuild.go).
  writeBuildConfig() {
    const javac = ["javac", "--release", "17", "-encoding", "UTF-8", "-implicit:none", "-sourcepath", "", "-cp", this.classes, "-d", this.classes, path.join(this.src, "Service.java")];
    const builds = {
      compile: { command: ["sh", "-c", 'echo "compiling Service"; exec "$0" "$@"', ...javac] },
      slow: { command: ["sh", "-c", 'echo "compiling Service"; "$0" "$@" || exit 1; echo $$ > build.pid; echo waiting; exec sleep 120', ...javac] },
      turn: { command: ["sh", "-c", 'mkdir build.running || { echo "overlap: build.running exists"; exit 1; }; echo "start $$" >> builds.log; echo "start $$"; "$0" "$@"; rc=$?; echo "end $$" >> builds.log; echo "end $$"; rmdir build.running; exit $rc', ...javac] },
    };
    fs.writeFileSync(path.join(this.root, ".buildguard.json"), JSON.stringify({ builds, defaultBuild: "compile" }, null, 2));
  }
}

// processGone reports whether pid no longer runs (absent, or a zombie).
function processGone(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat[stat.lastIndexOf(")") + 2] === "Z";
  } catch {
    return true;
  }
}

class App {
  static async start(project, agentJar) {
    const portFile = path.join(project.root, "agent.port");
    const agentArgs = `watchDirs=${project.classes},startupDelaySec=1,debounceMs=100,portFile=${portFile}`;
    const log = fs.createWriteStream(path.join(project.root, "app.log"));
    // Not detached: the JVM stays in this process group, so the Go driver's
    // group kill on a timeout ends it too.
    const child = spawn("java", [`-javaagent:${agentJar}=${agentArgs}`, "-cp", project.classes, "App"], { cwd: project.root, stdio: ["pipe", "pipe", "pipe"] });
    const app = new App(child, portFile, log);
    child.stderr.pipe(log, { end: false });
    await app.ready();
    return app;
  }
  constructor(child, portFile, log) {
    this.child = child;
    this.portFile = portFile;
    this.log = log;
    this.waiters = [];
    this.exited = false;
    this.readyInfo = null;
    this.watching = false;
    this.lineWaiters = [];
    child.on("exit", () => {
      this.exited = true;
      for (const w of this.waiters.splice(0)) w.reject(new Error("app exited"));
      for (const w of this.lineWaiters.splice(0)) w();
    });
    const rl = readline.createInterface({ input: child.stdout });
    rl.on("line", (raw) => {
      const line = raw.replace(/\r$/, "");
      log.write(line + "\n");
      const f = line.split(" ");
      if (f[0] === "READY" && f.length === 3) this.readyInfo = { pid: f[1], nonce: f[2] };
      else if (f[0] === "PROBE" && f.length === 5) {
        const p = { pid: f[1], nonce: f[2], counter: Number(f[3]), value: Number(f[4]) };
        const w = this.waiters.shift();
        if (w) w.resolve(p);
      } else if (line.includes("] Watching ")) this.watching = true;
      for (const w of this.lineWaiters.splice(0)) w();
    });
  }
  async ready() {
    const deadline = Date.now() + READY_MS;
    while (!(this.readyInfo && this.watching && fs.existsSync(this.portFile))) {
      if (this.exited) throw new Error("app exited before it was ready; see app.log");
      if (Date.now() > deadline) throw new Error(`app not ready within ${READY_MS} ms (READY ${!!this.readyInfo}, watching ${this.watching}); see app.log`);
      await sleep(50);
    }
    this.pid = this.readyInfo.pid;
    this.nonce = this.readyInfo.nonce;
  }
  probe() {
    if (this.exited) return Promise.reject(new Error("app exited"));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no PROBE answer within ${PROBE_MS} ms`)), PROBE_MS);
      this.waiters.push({ resolve: (p) => (clearTimeout(timer), resolve(p)), reject: (e) => (clearTimeout(timer), reject(e)) });
      this.child.stdin.write("probe\n");
    });
  }
  async close() {
    if (!this.exited) {
      this.child.kill("SIGKILL");
      let timer;
      await Promise.race([once(this.child, "exit"), new Promise((r) => (timer = setTimeout(r, 10000)))]);
      clearTimeout(timer);
    }
    this.log.end();
  }
}

// ---- the lane ----

class Lane extends ToolCaller {
  constructor(rec, client, app, project, install) {
    super(rec, client);
    this.app = app;
    this.project = project;
    this.install = install;
    this.hashes = {};
    this.last = null;
  }

  async build(state, owner, want) {
    const d = await this.call("reclazz_build", { state, owner }, want);
    if (want === "ok") {
      assert.equal(d.status, "acknowledged");
      assert.equal(d.state, state);
      assert.equal(d.owner, owner);
    }
    return d;
  }

  async compile(value) {
    this.project.writeService(value);
    this.hashes[value] = await this.project.compileService();
    return this.hashes[value];
  }

  async probe(value) {
    const p = await this.app.probe();
    this.rec.observe(p);
    this.last = p;
    if (p.value !== value) throw new Error(`probe shows value ${p.value}, want ${value}`);
    return p;
  }

  async held(value) {
    const end = Date.now() + HELD_MS;
    while (Date.now() < end) {
      await this.probe(value);
      await sleep(75);
    }
  }

  async reload(action) {
    const d = await this.call("reclazz_reload_control", { action }, "ok");
    assert.equal(d.status, "acknowledged");
    assert.equal(d.action, action);
    return d;
  }

  // safeBuild calls reclazz_safe_build with a progress token and returns
  // the result and the progress notifications, each checked to come before
  // the result with a growing progress.
  async safeBuild(build, want, options = {}) {
    const progress = [];
    let done = false;
    let late = 0;
    const d = await this.call("reclazz_safe_build", { build, timeoutMs: "14000" }, want, {
      ...options,
      onprogress: (p) => {
        if (done) late++;
        progress.push(p);
        options.onprogress?.(p);
      },
    });
    done = true;
    assert.ok(progress.length > 0, "notifications/progress arrive before the result");
    for (let i = 1; i < progress.length; i++) assert.ok(progress[i].progress > progress[i - 1].progress, "progress grows");
    assert.equal(late, 0);
    return { d, progress };
  }

  async proveReload(hash, value) {
    const before = this.last;
    const deadline = Date.now() + RECEIPT_POLL_MS;
    let d;
    for (;;) {
      d = await this.call("reclazz_verify", { className: "Service", sha256: hash }, "either");
      if (d.status === "applied" || Date.now() > deadline) break;
      await sleep(100);
    }
    const p = await this.app.probe();
    let obsErr = null;
    try {
      this.rec.observe(p);
    } catch (e) {
      obsErr = e;
    }
    this.last = p;
    if (!this.rec.claim("Service", hash, value, d, before, p)) throw new Error(`false completion: Service v${value}: receipt ${JSON.stringify(d)}, probe ${JSON.stringify(p)}`);
    if (obsErr) throw obsErr;
  }
}

test(`${LANE} lane: ten scenarios and pause/resume against a live JVM through buildguard mcp`, { timeout: 240000 }, async () => {
  const bin = process.env.BUILDGUARD_BIN;
  const jar = process.env.BUILDGUARD_AGENT_JAR;
  const work = process.env.CLIENT_WORK_DIR;
  assert.ok(bin && jar && work, "set BUILDGUARD_BIN, BUILDGUARD_AGENT_JAR and CLIENT_WORK_DIR");
  assert.ok(!fs.existsSync(work), `CLIENT_WORK_DIR ${work} exists; use a fresh one to keep earlier evidence`);
  fs.mkdirSync(work, { recursive: true });

  const rec = new Recorder(LANE);
  const sdkVersion = JSON.parse(fs.readFileSync(new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url), "utf8")).version;
  let osName = `${os.type()} ${os.release()}`;
  try {
    const pretty = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(fs.readFileSync("/etc/os-release", "utf8"));
    if (pretty) osName = pretty[1];
  } catch {}
  const metadata = {
    client: HTTP ? "TypeScript SDK Client + StreamableHTTPClientTransport (mcp --http)" : "TypeScript SDK Client + StdioClientTransport",
    sdk: `@modelcontextprotocol/sdk ${sdkVersion}`,
    node: process.version,
    platform: process.platform,
    arch: process.arch,
    os: osName,
    kernel: `${os.type()} ${os.release()}`,
    artifacts: {},
  };
  let client, app, transport, lane, project, install, httpServer, connectAnother;
  try {
    metadata.jdk = (await run("java", ["-version"])).stderr.trim();
  } catch {
    metadata.jdk = "unknown";
  }

  try {
    await rec.run("setup", async () => {
      install = path.join(work, "installed tools with spaces");
      fs.mkdirSync(install, { recursive: true });
      const binCopy = path.join(install, "buildguard");
      const jarCopy = path.join(install, path.basename(jar));
      fs.copyFileSync(bin, binCopy);
      fs.chmodSync(binCopy, 0o755);
      fs.copyFileSync(jar, jarCopy);
      metadata.artifacts = { buildguard: sha256(binCopy), agentJar: sha256(jarCopy) };

      project = new Project(path.join(work, "consumer project with spaces"));
      fs.writeFileSync(path.join(project.src, "App.java"), appSource);
      project.writeService(1);
      await project.javac("Service.java", "App.java");
      app = await App.start(project, jarCopy);
      assert.equal(app.pid, String(app.child.pid), "the app's pid is the java process");

      const serverArgs = ["mcp", "--project-dir", project.root, "--port-file", "agent.port"];
      // connectAnother starts a second session of the lane's kind: its own
      // buildguard mcp (stdio) or its own mcp --http server.
      connectAnother = async (n) => {
        let stderr2 = "";
        let srv;
        let tr;
        if (HTTP) {
          srv = await startHTTPServer(binCopy, serverArgs, install, path.join(work, `mcp-url-${n}`));
          tr = new StreamableHTTPClientTransport(new URL(srv.url));
        } else {
          tr = new StdioClientTransport({ command: binCopy, args: serverArgs, cwd: install, stderr: "pipe" });
          tr.stderr?.on("data", (b) => (stderr2 += b));
        }
        let negotiated;
        const set = tr.setProtocolVersion?.bind(tr);
        tr.setProtocolVersion = (v) => {
          negotiated = v;
          set?.(v);
        };
        const c = new Client({ name: `buildguard-client-matrix-${n}`, version: "1" });
        try {
          await c.connect(tr, { timeout: 10000 });
        } catch (e) {
          await tr.close().catch(() => {});
          await srv?.stop().catch(() => {});
          throw e;
        }
        return {
          client: c,
          negotiated,
          stderr: () => (srv ? srv.stderr() : stderr2),
          async close() {
            await c.close();
            if (srv) await srv.stop();
          },
        };
      };
      let stderr = "";
      if (HTTP) {
        httpServer = await startHTTPServer(binCopy, serverArgs, install, path.join(work, "mcp-url"));
        transport = new StreamableHTTPClientTransport(new URL(httpServer.url));
      } else {
        transport = new StdioClientTransport({ command: binCopy, args: serverArgs, cwd: install, stderr: "pipe" });
        transport.stderr?.on("data", (b) => (stderr += b));
      }
      // The SDK hands the negotiated version to transports that accept it.
      let negotiated;
      // (over HTTP the transport sends it as MCP-Protocol-Version, which decides the answers' shape)
      const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
      transport.setProtocolVersion = (v) => {
        negotiated = v;
        setProtocolVersion?.(v);
      };
      client = new Client({ name: "buildguard-client-matrix", version: "1" });
      await client.connect(transport, { timeout: 10000 });
      lane = new Lane(rec, client, app, project, install);
      lane.stderr = HTTP ? () => httpServer.stderr() : () => stderr;
      lane.negotiated = negotiated;
      assert.ok(negotiated, "the SDK reported the negotiated protocol version");
      const info = client.getServerVersion();
      assert.equal(info?.name, "buildguard");
      const printed = (await run(binCopy, ["version"])).stdout.trim();
      assert.equal(info.version, printed, "serverInfo.version is what buildguard version prints");
      metadata.serverName = info.name;
      metadata.serverVersion = info.version;
      await client.ping();
      const tools = (await client.listTools()).tools;
      assert.deepEqual(tools.map((t) => t.name).sort(), TOOLS);
      lane.setTools(tools);

      const status = await lane.call("reclazz_status", {}, "ok");
      assert.equal(status.attached, true);
      const doc = await lane.call("reclazz_doctor", {}, "ok");
      assert.equal(doc.status, "observed");
      assert.equal(doc.pid, app.pid);
      assert.equal(doc.reloadConfirmed, false);
      assert.equal(doc.verifySupported, true);
      assert.equal(doc.buildOwnershipSupported, true);
      assert.equal(doc.buildHold, "none");
      assert.equal(fs.realpathSync(doc.workingDirectory), fs.realpathSync(project.root));
      assert.equal(fs.realpathSync(doc.clientWorkingDirectory), fs.realpathSync(install));
      assert.ok(doc.sessionId);
      lane.session = doc.sessionId;
      rec.setBaseline({ pid: app.pid, nonce: app.nonce, sessionId: doc.sessionId });
      await lane.call("reclazz_pending", {}, "ok");
      await lane.call("reclazz_diagnose", { className: "Service" }, "ok");
      lane.appHash = project.sha("App");
      const p = await lane.probe(1);
      assert.equal(p.counter, 1);
    });
    metadata.protocolVersion = lane?.negotiated;

    await rec.run("successful-reload", async () => {
      await lane.build("started", OWNER, "ok");
      const h = await lane.compile(2);
      await lane.build("ok", OWNER, "ok");
      await lane.proveReload(h, 2);
    });

    await rec.run("mixed-batch", async () => {
      const d = await lane.call("reclazz_verify_batch", { items: [{ className: "Service", sha256: lane.hashes[2] }, { className: "App", sha256: lane.appHash }] }, "toolError");
      assert.equal(d.status, "incomplete");
      assert.equal(d.allApplied, false);
      assert.equal(d.atomic, false);
      assert.equal(d.reloadConfirmed, false);
      assert.equal(d.sessionId, lane.session);
      assert.deepEqual(d.results.map((r) => r.status), ["applied", "not_observed"]);
      await lane.probe(2);
    });

    await rec.run("failed-build-hold", async () => {
      // CLIENT_FAULT=skip-hold (the witness run only) compiles v3 without the
      // hold, so the held check below must fail.
      const skipHold = process.env.CLIENT_FAULT === "skip-hold";
      if (!skipHold) await lane.build("started", OWNER, "ok");
      const h3 = await lane.compile(3);
      await project.compileBroken();
      if (!skipHold) await lane.build("failed", OWNER, "ok");
      const scan = await lane.call("reclazz_scan", {}, "ok");
      assert.equal(scan.reloadConfirmed, false);
      await lane.held(2);
      const other = await lane.build("ok", OTHER_OWNER, "toolError");
      assert.equal(other.status, "unavailable");
      const v = await lane.call("reclazz_verify", { className: "Service", sha256: h3 }, "toolError");
      assert.notEqual(v.status, "applied");
      assert.equal(v.observedSha256, lane.hashes[2]);
      const doc = await lane.call("reclazz_doctor", {}, "ok");
      assert.equal(doc.buildHold, "named");
      await lane.probe(2);
    });

    await rec.run("recovery", async () => {
      await lane.build("started", OWNER, "ok");
      project.removeBroken();
      const h = await lane.compile(4);
      await lane.build("ok", OWNER, "ok");
      await lane.proveReload(h, 4);
    });

    await rec.run("stale-receipt", async () => {
      const v = await lane.call("reclazz_verify", { className: "Service", sha256: lane.hashes[3] }, "toolError");
      assert.equal(v.status, "mismatch");
      assert.equal(v.observedSha256, lane.hashes[4]);
      await lane.probe(4);
    });

    await rec.run("unavailable-target", async () => {
      const d = await lane.call("reclazz_doctor", { portFile: "missing agent.port" }, "toolError");
      assert.equal(d.status, "unavailable");
      assert.equal(d.reloadConfirmed, false);
      await lane.probe(4);
    });

    await rec.run("malformed-input", async () => {
      const bad = await lane.call("reclazz_build", { state: "invented", owner: OWNER }, "argError");
      assert.equal(bad.message, "reclazz_build requires state: started, ok or failed");
      await client.ping();
      await lane.probe(4);
    });

    await rec.run("safe-build-progress", async () => {
      project.writeBuildConfig();
      const value = lane.last.value + 1;
      project.writeService(value);
      const { d, progress } = await lane.safeBuild("compile", "ok");
      assert.equal(d.outcome, "ok");
      assert.match(progress[0].message, /^compiling Service/);
      const built = project.sha("Service");
      lane.hashes[value] = built;
      const svc = d.changedClasses.classes.find((c) => c.className === "Service");
      assert.ok(d.changedClasses.allApplied && svc && svc.sha256 === built && svc.status === "applied", `changedClasses ${JSON.stringify(d.changedClasses)} must hold Service applied with ${built}`);
      await lane.proveReload(built, value);
    });

    await rec.run("safe-build-cancel", async () => {
      const old = lane.last.value;
      project.writeService(old + 1);
      const pidFile = path.join(project.root, "build.pid");
      fs.rmSync(pidFile, { force: true });
      const abort = new AbortController();
      lane.rec.call("reclazz_safe_build");
      lane.called.reclazz_safe_build = (lane.called.reclazz_safe_build ?? 0) + 1;
      // Cancel once the build recorded its pid: it compiled and now runs on.
      const started = (async () => {
        const until = Date.now() + 15000;
        while (!fs.existsSync(pidFile) && Date.now() < until) await sleep(20);
        abort.abort("cancelled by the client matrix");
      })();
      await assert.rejects(
        client.callTool({ name: "reclazz_safe_build", arguments: { build: "slow", timeoutMs: "60000" } }, undefined, { timeout: 60000, signal: abort.signal }),
        "the cancelled call rejects",
      );
      await started;
      assert.ok(fs.existsSync(pidFile), "the slow build recorded its pid before the cancellation");
      const pid = Number(fs.readFileSync(pidFile, "utf8").trim());
      const deadline = Date.now() + 10000;
      while (!processGone(pid) && Date.now() < deadline) await sleep(20);
      assert.ok(processGone(pid), `the cancelled build (pid ${pid}) was stopped`);
      const doc = await lane.call("reclazz_doctor", {}, "ok");
      assert.equal(doc.buildHold, "named");
      await lane.held(old);
      project.writeService(old + 2);
      let d;
      for (;;) {
        ({ d } = await lane.safeBuild("compile", "either"));
        if (d.outcome !== "refused" || Date.now() > deadline) break;
        await sleep(100);
      }
      assert.equal(d.outcome, "ok", `the build after the cancelled one: ${JSON.stringify(d)}`);
      const built = project.sha("Service");
      lane.hashes[old + 2] = built;
      await lane.proveReload(built, old + 2);
    });

    // Two sessions of the lane's kind ask for the same safe build at the
    // same moment: both end ok and never ran at once (docs/decisions.md#D18,
    // the second waited its turn or joined the first), as each result's
    // output (start PID … end PID) and builds.log (runs one after the
    // other) show; the run that built the new bytes reports Service applied
    // with them, the other no other bytes.
    await rec.run("concurrent-safe-builds", async () => {
      const value = lane.last.value + 1;
      project.writeService(value);
      const logPath = path.join(project.root, "builds.log");
      fs.rmSync(logPath, { force: true });
      const other = await connectAnother(2);
      let answers;
      try {
        assert.equal(other.negotiated, lane.negotiated, "the second session negotiated the lane's version");
        const lane2 = new Lane(rec, other.client, app, project, install);
        lane2.negotiated = other.negotiated;
        lane2.setTools((await other.client.listTools()).tools);
        answers = await Promise.all([lane.safeBuild("turn", "ok"), lane2.safeBuild("turn", "ok")]);
        lane.results.push(...lane2.results);
        assert.equal(other.stderr(), "", "the second buildguard mcp wrote nothing to stderr");
      } finally {
        await other.close();
      }
      const built = project.sha("Service");
      lane.hashes[value] = built;
      const lines = fs.readFileSync(logPath, "utf8").trimEnd().split("\n");
      assert.ok(lines.length === 2 || lines.length === 4, `builds.log ${JSON.stringify(lines)}: one run (joined) or two (one waited)`);
      const runs = [];
      for (let i = 0; i < lines.length; i += 2) {
        const pid = lines[i].startsWith("start ") ? lines[i].slice(6) : "";
        assert.ok(pid && lines[i + 1] === `end ${pid}`, `builds.log ${JSON.stringify(lines)}: the builds overlapped or one did not end`);
        runs.push(pid);
      }
      const byRun = new Map();
      for (const [i, { d }] of answers.entries()) {
        assert.equal(d.outcome, "ok");
        const tail = d.output.tail.split("\n");
        assert.ok(!d.output.tail.includes("overlap"), `client ${i + 1}: the build saw another one running`);
        const pid = runs.find((p) => tail.includes(`start ${p}`) && tail.includes(`end ${p}`));
        assert.ok(pid, `client ${i + 1}: output ${JSON.stringify(d.output.tail)} names none of the runs ${runs}`);
        assert.ok(runs.length === 1 || !byRun.has(pid), `both results name run ${pid}, but two runs happened`);
        byRun.set(pid, d);
      }
      for (const [i, pid] of runs.entries()) {
        const cc = byRun.get(pid).changedClasses;
        const svc = cc.classes.find((c) => c.className === "Service");
        assert.ok(cc.allApplied && (svc || i > 0) && (!svc || (svc.sha256 === built && svc.status === "applied")), `run ${i + 1} (pid ${pid}) changedClasses ${JSON.stringify(cc)} must hold Service applied with ${built}`);
      }
      await lane.proveReload(built, value);
    });

    await rec.run(EXTENSION, async () => {
      const cur = lane.last.value;
      let d = await lane.reload("pause");
      assert.equal(d.paused, true);
      const h = await lane.compile(cur + 1);
      await lane.call("reclazz_scan", {}, "ok");
      const deadline = Date.now() + 10000;
      for (;;) {
        d = await lane.reload("status");
        assert.equal(d.paused, true);
        if (d.pendingClasses === 1) break;
        if (Date.now() > deadline) throw new Error(`status while paused: pendingClasses ${d.pendingClasses}, want 1`);
        await sleep(100);
      }
      await lane.probe(cur);
      d = await lane.reload("resume");
      assert.equal(d.paused, false);
      assert.equal(d.reloadConfirmed, false);
      await lane.proveReload(h, cur + 1);
      for (const t of TOOLS) assert.ok(lane.called[t] > 0, `${t} was never called`);
      assert.ok(!app.exited, "the app is still running");
      assert.equal(lane.stderr(), "", "buildguard mcp wrote nothing to stderr");
      if (HTTP) {
        await client.close();
        client = undefined;
        const s = httpServer;
        httpServer = undefined;
        await s.stop();
      }
    });
  } finally {
    try {
      await client?.close();
    } catch {}
    try {
      await httpServer?.stop();
    } catch {}
    await app?.close();
    const ev = rec.evaluation(metadata);
    fs.writeFileSync(path.join(work, "evaluation.json"), JSON.stringify(ev, null, 2) + "\n");
    if (ev.passed) {
      const evidence = { passed: true, lane: LANE, metadata, pid: app.pid, nonce: app.nonce, sessionId: lane.session, tools: lane.tools, negativeWitnesses: ev.summary.negativeWitnesses, scenarios: SCENARIOS, extension: EXTENSION, summary: ev.summary, results: lane.results };
      fs.writeFileSync(path.join(work, "evidence.json"), JSON.stringify(evidence, null, 2) + "\n");
    }
  }
  const ev = JSON.parse(fs.readFileSync(path.join(work, "evaluation.json"), "utf8"));
  assert.ok(ev.passed, `lane ${LANE}: ${ev.error ?? "not passed"}`);
});
