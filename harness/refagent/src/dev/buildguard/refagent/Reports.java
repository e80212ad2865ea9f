package dev.buildguard.refagent;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The free-text broadcast answers: PENDING, HEALTH and DIAGNOSE (docs/agent-protocol.md#4.4-4.6).
 * Their wording is not a contract; the first PENDING line is.
 */
final class Reports {
    private final String agentRelease;
    private final Instant startedAt = Instant.now();
    private final ClassWatcher watcher;
    private final ReloadQueue queue;
    private final Redefiner redefiner;
    private final ReceiptLedger ledger;

    Reports(String agentRelease, ClassWatcher watcher, ReloadQueue queue, Redefiner redefiner, ReceiptLedger ledger) {
        this.agentRelease = agentRelease;
        this.watcher = watcher;
        this.queue = queue;
        this.redefiner = redefiner;
        this.ledger = ledger;
    }

    List<String> pending() {
        List<String> lines = new ArrayList<>();
        lines.add("Automatic reload: " + queue.snapshot());
        Map<String, Integer> restart = redefiner.restartLedger();
        if (restart.isEmpty()) {
            lines.add("Nothing from this session needs a restart.");
        } else {
            lines.add(restart.size() == 1 ? "One thing from this session needs a restart:"
                    : restart.size() + " things from this session need a restart:");
            for (Map.Entry<String, Integer> e : restart.entrySet()) {
                lines.add(e.getKey() + (e.getValue() > 1 ? " (" + e.getValue() + " times)" : ""));
            }
        }
        return lines;
    }

    List<String> health() {
        List<String> lines = new ArrayList<>();
        long minutes = Duration.between(startedAt, Instant.now()).toMinutes();
        lines.add("Reference agent " + agentRelease + " (test/demo agent, not Reclazz), up " + minutes
                + (minutes == 1 ? " minute." : " minutes."));
        long reloads = redefiner.reloads();
        long failures = redefiner.failures();
        if (reloads == 0 && failures == 0) {
            lines.add("Nothing has reloaded yet this session.");
        } else {
            lines.add(reloads + " reloads: 0 structural, " + reloads + " method bodies"
                    + (failures > 0 ? ", and " + failures + " failures." : "."));
        }
        if (ClassWatcher.STARTING.equals(watcher.state())) {
            lines.add("The watcher is starting; no directories are registered yet.");
        } else {
            int live = watcher.liveDirectories().size();
            int refused = watcher.refusedCount();
            lines.add(live + (live == 1 ? " directory" : " directories") + " watched"
                    + (refused > 0 ? ", and " + refused + " that could not be." : "."));
        }
        Instant last = redefiner.lastChange();
        if (last != null) {
            lines.add("Last change " + Duration.between(last, Instant.now()).toSeconds() + " seconds ago.");
        }
        int restart = redefiner.restartLedger().size();
        lines.add(restart == 0 ? "Nothing is waiting on a restart."
                : restart + " things waiting on a restart; ask PENDING for what.");
        String queueLine = queue.healthLine();
        if (queueLine != null) {
            lines.add(queueLine);
        }
        return lines;
    }

    List<String> diagnose(String name) {
        List<String> lines = new ArrayList<>();
        if (name.isEmpty()) {
            lines.add("Give a class name, for example DIAGNOSE com.acme.OrderService");
            return lines;
        }
        lines.add("Reference agent diagnosis for " + name);
        List<Path> files = watcher.filesFor(name);
        if (files.isEmpty()) {
            lines.add("No compiled class file with that name in the watched directories.");
        }
        for (Path f : files) {
            lines.add("Compiled file: " + f);
        }
        int copies = redefiner.loadedCopies(name);
        if (copies == 0) {
            lines.add(redefiner.wasNotLoaded(name)
                    ? "Not loaded in this JVM; a changed class file arrived before the class was loaded."
                    : "Not loaded in this JVM.");
        } else {
            lines.add("Loaded " + (copies == 1 ? "once." : copies + " times (by different class loaders)."));
        }
        if (queue.isPending(name)) {
            lines.add("A changed class file is pending (" + queue.snapshot() + ").");
        }
        ReceiptLedger.Receipt r = ledger.get(name);
        if (r == null) {
            lines.add("No reload attempt in this session.");
        } else {
            lines.add("Last attempt: " + r.status + " (" + r.detail + ")"
                    + (r.completedAt.isEmpty() ? "" : " at " + r.completedAt) + ", sha256 " + r.sha256);
        }
        return lines;
    }
}
