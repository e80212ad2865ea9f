package dev.buildguard.refagent;

import java.io.IOException;
import java.lang.instrument.Instrumentation;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Entry point of the buildguard reference agent: a small test and demonstration Java agent
 * that speaks the Reclazz status-socket protocol (server side) and really reloads classes with
 * {@link Instrumentation#redefineClasses}. It is not the Reclazz agent.
 *
 * <p>Arguments: {@code watchDirs=<dir>;<dir>,portFile=<path>,startupDelaySec=N,debounceMs=N,statusPort=N}.
 */
public final class Agent {
    private static boolean started;

    private Agent() {
    }

    public static void premain(String args, Instrumentation inst) {
        start(args, inst);
    }

    public static void agentmain(String args, Instrumentation inst) {
        start(args, inst);
    }

    private static synchronized void start(String rawArgs, Instrumentation inst) {
        if (started) {
            Status.console("WARN Agent already started; ignoring a second start");
            return;
        }
        started = true;
        String release = Agent.class.getPackage().getImplementationVersion();
        if (release == null || release.isBlank()) {
            release = "unknown";
        }
        AgentArgs args = AgentArgs.parse(rawArgs);
        for (String w : args.warnings) {
            Status.console("WARN " + w);
        }
        if (!inst.isRedefineClassesSupported()) {
            Status.console("WARN This JVM cannot redefine classes; reloads will fail");
        }

        Status status = new Status();
        ReceiptLedger ledger = new ReceiptLedger();
        ClassWatcher watcher = new ClassWatcher(args.watchDirs, args.debounceMs, args.startupDelaySec);
        Redefiner redefiner = new Redefiner(inst, ledger, status);
        ReloadQueue queue = new ReloadQueue(status, watcher, redefiner);
        Doctor doctor = new Doctor(release, ledger, watcher, queue);
        Reports reports = new Reports(release, watcher, queue, redefiner, ledger);
        CommandDispatcher dispatcher = new CommandDispatcher(status, queue, ledger, watcher, doctor, reports);

        Status.console("Reference agent " + release + " starting (a test/demo agent, not Reclazz); "
                + args.watchDirs.size() + " watch directories, watcher starts in " + args.startupDelaySec + " s"
                + (args.tcpNoDelay ? "; status socket TCP_NODELAY on" : ""));

        StatusServer server = null;
        Path portFile = args.portFile;
        if (portFile == null) {
            Path dir = Paths.get(System.getProperty("user.dir", ".")).toAbsolutePath().resolve(".reclazz");
            try {
                Files.createDirectories(dir);
                portFile = dir.resolve("agent.port");
            } catch (IOException e) {
                Status.console("WARN Could not create " + dir + ": " + e.getMessage());
            }
        }
        if (portFile != null || args.statusPort > 0) {
            server = new StatusServer(release, status, dispatcher::handle, args.tcpNoDelay);
            try {
                server.start(args.statusPort, portFile);
                status.attach(server);
                server.every(5, queue::checkHoldAge);
            } catch (IOException e) {
                Status.console("WARN Could not start the status server: " + e.getMessage());
                server.stop();
                server = null;
            }
        } else {
            Status.console("WARN No port file location and no statusPort: running without a status socket");
        }

        watcher.start(queue);

        StatusServer toStop = server;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            watcher.stop();
            queue.stop();
            if (toStop != null) {
                toStop.stop();
            }
        }, "buildguard-refagent-shutdown"));
    }
}
