package dev.buildguard.refagent;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The agent arguments: comma-separated key=value pairs, e.g.
 * {@code watchDirs=/p/a out;/p/b out,startupDelaySec=1,debounceMs=100,portFile=/p/agent.port}.
 * Paths may contain spaces; {@code watchDirs} is split on ';'. Relative paths resolve against
 * the JVM working directory. Problems become warnings (printed by the agent), never failures.
 */
final class AgentArgs {
    /** Default watcher start delay (docs/agent-protocol.md#9). */
    static final int DEFAULT_STARTUP_DELAY_SEC = 30;
    static final int MAX_STARTUP_DELAY_SEC = 300;
    /** Default quiet period before a changed class file is reported. */
    static final long DEFAULT_DEBOUNCE_MS = 100;
    static final long MAX_DEBOUNCE_MS = 10_000;

    final List<Path> watchDirs;
    /** Explicit port file, or null for the default {@code <user.dir>/.reclazz/agent.port}. */
    final Path portFile;
    final int statusPort;
    final int startupDelaySec;
    final long debounceMs;
    /** Whether status-socket connections send each line at once (TCP_NODELAY); default false. */
    final boolean tcpNoDelay;
    final List<String> warnings;

    private AgentArgs(List<Path> watchDirs, Path portFile, int statusPort, int startupDelaySec,
            long debounceMs, boolean tcpNoDelay, List<String> warnings) {
        this.watchDirs = Collections.unmodifiableList(watchDirs);
        this.portFile = portFile;
        this.statusPort = statusPort;
        this.startupDelaySec = startupDelaySec;
        this.debounceMs = debounceMs;
        this.tcpNoDelay = tcpNoDelay;
        this.warnings = Collections.unmodifiableList(warnings);
    }

    static AgentArgs parse(String args) {
        List<Path> dirs = new ArrayList<>();
        Path portFile = null;
        int port = 0;
        int delay = DEFAULT_STARTUP_DELAY_SEC;
        long debounce = DEFAULT_DEBOUNCE_MS;
        boolean noDelay = false;
        List<String> warnings = new ArrayList<>();
        Path cwd = Paths.get(System.getProperty("user.dir", ".")).toAbsolutePath();
        if (args != null) {
            for (String pair : args.split(",")) {
                if (pair.isBlank()) {
                    continue;
                }
                int eq = pair.indexOf('=');
                if (eq <= 0) {
                    warnings.add("Ignoring agent argument without key=value: " + pair);
                    continue;
                }
                String key = pair.substring(0, eq).strip();
                String value = pair.substring(eq + 1);
                switch (key) {
                    case "watchDirs":
                        for (String d : value.split(";")) {
                            if (!d.isBlank()) {
                                dirs.add(cwd.resolve(d).normalize());
                            }
                        }
                        break;
                    case "portFile":
                        if (value.isBlank()) {
                            warnings.add("Ignoring empty portFile argument");
                        } else {
                            portFile = cwd.resolve(value).normalize();
                        }
                        break;
                    case "statusPort":
                        port = Math.max(0, parseInt(key, value.strip(), 0, warnings));
                        if (port > 65535) {
                            warnings.add("statusPort " + port + " is out of range; using an ephemeral port");
                            port = 0;
                        }
                        break;
                    case "startupDelaySec":
                        delay = clamp(parseInt(key, value.strip(), DEFAULT_STARTUP_DELAY_SEC, warnings),
                                0, MAX_STARTUP_DELAY_SEC);
                        break;
                    case "debounceMs":
                        debounce = clamp(parseInt(key, value.strip(), (int) DEFAULT_DEBOUNCE_MS, warnings),
                                0, (int) MAX_DEBOUNCE_MS);
                        break;
                    case "tcpNoDelay":
                        if (value.strip().equals("true") || value.strip().equals("false")) {
                            noDelay = value.strip().equals("true");
                        } else {
                            warnings.add("Could not parse tcpNoDelay=" + value + "; using false");
                        }
                        break;
                    default:
                        warnings.add("Ignoring unknown agent argument: " + key);
                }
            }
        }
        return new AgentArgs(dirs, portFile, port, delay, debounce, noDelay, warnings);
    }

    private static int parseInt(String key, String value, int fallback, List<String> warnings) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            warnings.add("Could not parse " + key + "=" + value + "; using " + fallback);
            return fallback;
        }
    }

    private static int clamp(int v, int lo, int hi) {
        return Math.max(lo, Math.min(hi, v));
    }
}
