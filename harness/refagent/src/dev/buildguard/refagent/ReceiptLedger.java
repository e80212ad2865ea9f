package dev.buildguard.refagent;

import java.time.Instant;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * The VERIFY receipt ledger of docs/agent-protocol.md#8: one latest receipt per class, over the
 * exact bytes a batch applied, at most 512 classes (oldest-inserted evicted first), and a
 * session id that is new on every agent start.
 */
final class ReceiptLedger {
    static final int CAPACITY = 512;
    static final int MAX_FIELD_CHARS = 200;

    static final String RUNNING = "running";
    static final String APPLIED = "applied";
    static final String FAILED = "failed";
    static final String UNVERIFIED = "unverified";

    /** One attempt to apply captured bytes of one class. */
    static final class Receipt {
        final String className;
        final String sha256;
        /** Full path the bytes came from; identifies the receipt's source. */
        final String sourcePath;
        /** The path cut to its first 200 chars, as VERIFY reports it. */
        final String source;
        String status = RUNNING;
        String detail = "Reload batch has not completed";
        String completedAt = "";

        Receipt(String className, String sha256, String source) {
            this.className = className;
            this.sha256 = sha256;
            this.sourcePath = source;
            this.source = cut(source);
        }
    }

    final String sessionId = UUID.randomUUID().toString();
    private final LinkedHashMap<String, Receipt> latest = new LinkedHashMap<>();

    /** Records a running attempt, replacing the class's receipt and any from the same source. */
    synchronized Receipt start(String className, String sha256, String source) {
        Receipt r = new Receipt(className, sha256, source);
        latest.values().removeIf(old -> old.sourcePath.equals(r.sourcePath));
        latest.remove(className);
        latest.put(className, r);
        Iterator<Map.Entry<String, Receipt>> it = latest.entrySet().iterator();
        while (latest.size() > CAPACITY && it.hasNext()) {
            it.next();
            it.remove();
        }
        return r;
    }

    /** Completes an attempt; a superseded or evicted receipt is never resurrected. */
    synchronized void finish(Receipt r, String status, String detail, Instant completedAt) {
        if (latest.get(r.className) != r) {
            return;
        }
        r.status = status;
        r.detail = cut(detail);
        r.completedAt = completedAt.toString();
    }

    synchronized Receipt get(String className) {
        return latest.get(className);
    }

    synchronized int size() {
        return latest.size();
    }

    /** The VERIFY_RESULT JSON: nine string fields in the order of docs/agent-protocol.md#8. */
    synchronized String verify(String requestId, String className, String expectedSha256) {
        Receipt r = latest.get(className);
        String observed = "";
        String status;
        String source = "";
        String detail;
        String completedAt = "";
        if (r == null) {
            status = "not_observed";
            detail = "No retained reload receipt in this agent session";
        } else if (!r.sha256.equals(expectedSha256)) {
            observed = r.sha256;
            status = "mismatch";
            source = r.source;
            detail = "The latest attempted bytes differ from the requested bytes";
            completedAt = r.completedAt;
        } else {
            observed = r.sha256;
            status = r.status;
            source = r.source;
            detail = r.detail;
            completedAt = r.completedAt;
        }
        return "{\"requestId\":" + Events.quote(requestId)
                + ",\"sessionId\":" + Events.quote(sessionId)
                + ",\"className\":" + Events.quote(className)
                + ",\"expectedSha256\":" + Events.quote(expectedSha256)
                + ",\"observedSha256\":" + Events.quote(observed)
                + ",\"status\":" + Events.quote(status)
                + ",\"source\":" + Events.quote(source)
                + ",\"detail\":" + Events.quote(detail)
                + ",\"completedAt\":" + Events.quote(completedAt) + "}";
    }

    static String cut(String s) {
        if (s == null) {
            return "";
        }
        return s.length() > MAX_FIELD_CHARS ? s.substring(0, MAX_FIELD_CHARS) : s;
    }
}
