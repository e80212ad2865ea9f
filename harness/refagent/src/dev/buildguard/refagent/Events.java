package dev.buildguard.refagent;

import java.time.Instant;

/**
 * Builds the agent-to-client status lines of docs/agent-protocol.md#2: fixed field order, no
 * whitespace, the message truncated at 4096 chars and escaped exactly as docs/agent-protocol.md#2.3.
 */
final class Events {
    /** Longest message text before "...(truncated)" is appended (docs/agent-protocol.md#2.3). */
    static final int MAX_MESSAGE_CHARS = 4096;

    static final String CONNECTED = "CONNECTED";
    static final String HEARTBEAT = "HEARTBEAT";
    static final String INFO = "INFO";
    static final String OK = "OK";
    static final String WARN = "WARN";
    static final String ERROR = "ERROR";
    static final String RELOAD = "RELOAD";
    static final String STRUCTURAL_RELOAD = "STRUCTURAL_RELOAD";
    static final String COMPILE = "COMPILE";

    private Events() {
    }

    /** One event line (without line terminator) with the message escaped and truncated. */
    static String line(String level, String message) {
        return raw(level, escape(truncate(message)));
    }

    /**
     * One event line whose message is inserted without escaping. Only for BUILD_ACK and
     * BUILD_REJECTED replies, whose tokens are restricted to [A-Za-z0-9_-] (docs/agent-protocol.md#2.3).
     */
    static String unescapedLine(String level, String message) {
        return raw(level, message);
    }

    static String connected(String agentRelease) {
        return "{\"level\":\"CONNECTED\",\"message\":\"Agent status server connected\",\"timestamp\":\""
                + Instant.now() + "\",\"version\":1,\"agent\":\"" + escape(truncate(agentRelease)) + "\"}";
    }

    private static String raw(String level, String escapedMessage) {
        StringBuilder b = new StringBuilder(escapedMessage.length() + 80);
        b.append("{\"level\":\"").append(level).append("\",\"message\":\"").append(escapedMessage)
                .append("\",\"timestamp\":\"").append(Instant.now()).append('"');
        if (STRUCTURAL_RELOAD.equals(level)) {
            b.append(",\"type\":\"structural\"");
        }
        return b.append('}').toString();
    }

    static String truncate(String s) {
        if (s == null) {
            return "";
        }
        if (s.length() > MAX_MESSAGE_CHARS) {
            return s.substring(0, MAX_MESSAGE_CHARS) + "...(truncated)";
        }
        return s;
    }

    /** JSON string escaping of docs/agent-protocol.md#2.3 (no truncation, no surrounding quotes). */
    static String escape(String s) {
        StringBuilder b = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            String rep;
            switch (c) {
                case '\\': rep = "\\\\"; break;
                case '"': rep = "\\\""; break;
                case '\n': rep = "\\n"; break;
                case '\r': rep = "\\r"; break;
                case '\t': rep = "\\t"; break;
                default:
                    rep = c < 0x20 ? String.format("\\u%04x", (int) c) : null;
            }
            if (rep != null && b == null) {
                b = new StringBuilder(s.length() + 16);
                b.append(s, 0, i);
            }
            if (b != null) {
                if (rep != null) {
                    b.append(rep);
                } else {
                    b.append(c);
                }
            }
        }
        return b == null ? s : b.toString();
    }

    /** A JSON string literal (quoted, escaped as docs/agent-protocol.md#2.3) for the inner DOCTOR/VERIFY JSON. */
    static String quote(String s) {
        return "\"" + escape(s == null ? "" : s) + "\"";
    }
}
