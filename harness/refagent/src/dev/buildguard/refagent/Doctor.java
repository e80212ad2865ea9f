package dev.buildguard.refagent;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The DOCTOR evidence of docs/agent-protocol.md#7: identity and watcher/hold context in the exact
 * field order, with the string, sample and size bounds; anything out of bounds (or any
 * exception) yields the {@code unavailable} object instead.
 */
final class Doctor {
    static final int MAX_STRING_CHARS = 512;
    static final int MAX_JSON_CHARS = 3900;
    static final int MAX_SAMPLE = 8;
    static final int MAX_SAMPLE_PATH_CHARS = 256;
    static final String DETAIL = "Point-in-time evidence about this JVM and its agent; it does not prove that any reload happened";

    private final String agentRelease;
    private final ReceiptLedger ledger;
    private final ClassWatcher watcher;
    private final ReloadQueue queue;

    Doctor(String agentRelease, ReceiptLedger ledger, ClassWatcher watcher, ReloadQueue queue) {
        this.agentRelease = agentRelease;
        this.ledger = ledger;
        this.watcher = watcher;
        this.queue = queue;
    }

    String evidence(String requestId) {
        try {
            String json = observed(requestId);
            if (json != null && json.length() <= MAX_JSON_CHARS) {
                return json;
            }
        } catch (RuntimeException e) {
            // fall through to the bounded fallback
        }
        return "{\"requestId\":" + Events.quote(requestId)
                + ",\"status\":\"unavailable\",\"detail\":\"Doctor evidence unavailable or exceeds bounded message size\"}";
    }

    private String observed(String requestId) {
        String[] strings = {
            requestId, "observed", DETAIL, ledger == null ? "" : ledger.sessionId, agentRelease,
            Long.toString(ProcessHandle.current().pid()),
            System.getProperty("java.version", ""), System.getProperty("java.vm.name", ""),
            System.getProperty("user.dir", ""),
            watcher == null ? "unavailable" : watcher.state(),
            queue == null ? "unavailable" : queue.holdKind(),
        };
        for (String s : strings) {
            if (s.length() > MAX_STRING_CHARS) {
                return null;
            }
        }
        List<Path> live = watcher == null ? List.of() : watcher.liveDirectories();
        List<String> sample = new ArrayList<>();
        for (Path p : live) {
            String s = p.toAbsolutePath().normalize().toString();
            if (sample.size() < MAX_SAMPLE && s.length() <= MAX_SAMPLE_PATH_CHARS) {
                sample.add(s);
            }
        }
        StringBuilder b = new StringBuilder(1024);
        String[] names = {
            "requestId", "status", "detail", "sessionId", "agentVersion", "pid", "javaVersion", "vmName",
            "workingDirectory", "watcherState", "buildHold",
        };
        b.append('{');
        for (int i = 0; i < names.length; i++) {
            if (i > 0) {
                b.append(',');
            }
            b.append('"').append(names[i]).append("\":").append(Events.quote(strings[i]));
        }
        b.append(",\"watchedDirectoryCount\":").append(live.size());
        b.append(",\"unwatchableDirectoryCount\":").append(watcher == null ? 0 : watcher.refusedCount());
        b.append(",\"watchSampleTruncated\":").append(live.size() > sample.size());
        b.append(",\"watchedDirectories\":[");
        for (int i = 0; i < sample.size(); i++) {
            if (i > 0) {
                b.append(',');
            }
            b.append(Events.quote(sample.get(i)));
        }
        b.append(']');
        b.append(",\"buildOwnershipSupported\":").append(queue != null);
        b.append(",\"verifySupported\":").append(ledger != null);
        b.append(",\"scanSupported\":").append(watcher != null);
        b.append(",\"reloadConfirmed\":false}");
        return b.toString();
    }
}
