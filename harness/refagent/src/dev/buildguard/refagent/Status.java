package dev.buildguard.refagent;

import java.io.PrintStream;

/**
 * The agent's status reporter: every event is printed to the application's stdout with the
 * {@code [buildguard-refagent]} prefix and broadcast to every status-socket client.
 * It also counts WARN/ERROR lines emitted on a thread that is applying a batch, because one
 * warning downgrades every receipt of that batch to {@code unverified} (docs/agent-protocol.md#8).
 */
final class Status {
    static final String PREFIX = "[buildguard-refagent] ";

    private final ThreadLocal<int[]> problems = new ThreadLocal<>();
    private volatile StatusServer server;

    void attach(StatusServer server) {
        this.server = server;
    }

    void emit(String level, String message) {
        if (Events.WARN.equals(level) || Events.ERROR.equals(level)) {
            int[] counter = problems.get();
            if (counter != null) {
                counter[0]++;
            }
        }
        console(level + " " + message);
        StatusServer s = server;
        if (s != null) {
            s.broadcast(Events.line(level, message));
        }
    }

    void info(String message) {
        emit(Events.INFO, message);
    }

    void warn(String message) {
        emit(Events.WARN, message);
    }

    void error(String message) {
        emit(Events.ERROR, message);
    }

    /** Prints one agent line to stdout (not to socket clients). */
    static void console(String text) {
        PrintStream out = System.out;
        out.println(PREFIX + text);
        out.flush();
    }

    /** Starts counting WARN/ERROR lines emitted on the current thread. */
    void beginProblemCount() {
        problems.set(new int[1]);
    }

    /** Stops counting on the current thread and returns how many WARN/ERROR lines it emitted. */
    int endProblemCount() {
        int[] counter = problems.get();
        problems.remove();
        return counter == null ? 0 : counter[0];
    }
}
