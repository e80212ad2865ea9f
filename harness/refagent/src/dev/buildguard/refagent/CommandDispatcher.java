package dev.buildguard.refagent;

import java.util.List;
import java.util.regex.Pattern;

/**
 * The command dispatcher of docs/agent-protocol.md#4: exact order and grammar, silent ignore of
 * anything that does not parse, correlated replies to the requesting connection only, and a
 * broadcast {@code WARN Could not answer …} when a handler throws.
 */
final class CommandDispatcher {
    static final Pattern TOKEN = Pattern.compile("[A-Za-z0-9_-]{1,64}");
    static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");
    static final int MAX_CLASS_NAME_CHARS = 256;

    private final Status status;
    private final ReloadQueue queue;
    private final ReceiptLedger ledger;
    private final ClassWatcher watcher;
    private final Doctor doctor;
    private final Reports reports;

    CommandDispatcher(Status status, ReloadQueue queue, ReceiptLedger ledger, ClassWatcher watcher,
            Doctor doctor, Reports reports) {
        this.status = status;
        this.queue = queue;
        this.ledger = ledger;
        this.watcher = watcher;
        this.doctor = doctor;
        this.reports = reports;
    }

    void handle(ClientConnection from, String rawLine) {
        String line = rawLine.strip();
        if (line.length() > ClientConnection.MAX_COMMAND_CHARS) {
            return;
        }
        try {
            dispatch(from, line);
        } catch (RuntimeException | LinkageError e) {
            status.warn("Could not answer " + line + ": " + e);
        }
    }

    private void dispatch(ClientConnection from, String line) {
        if (line.startsWith("RELOAD ")) {
            reload(from, line);
        } else if (line.startsWith("DOCTOR ")) {
            String token = line.substring("DOCTOR ".length());
            if (TOKEN.matcher(token).matches()) {
                reply(from, Events.line(Events.INFO, "DOCTOR_RESULT " + token + " " + doctor.evidence(token)));
            }
        } else if (line.startsWith("VERIFY ")) {
            verify(from, line);
        } else if (line.regionMatches(true, 0, "BUILD ", 0, "BUILD ".length())) {
            build(from, line);
        } else if (line.equalsIgnoreCase("PENDING")) {
            broadcastAll(reports.pending());
        } else if (line.equalsIgnoreCase("SCAN")) {
            watcher.requestScan();
        } else if (line.equalsIgnoreCase("HEALTH")) {
            broadcastAll(reports.health());
        } else if (line.regionMatches(true, 0, "DIAGNOSE", 0, "DIAGNOSE".length())) {
            broadcastAll(reports.diagnose(line.substring("DIAGNOSE".length()).strip()));
        }
        // anything else: ignored, no reply, connection stays open
    }

    private void build(ClientConnection from, String line) {
        String rest = line.substring("BUILD ".length()).strip();
        String[] parts = rest.split("\\s+");
        if (parts.length > 3) {
            return;
        }
        String request = null;
        String owner = null;
        for (int i = 1; i < parts.length; i++) {
            String p = parts[i];
            if (p.startsWith("request=") && request == null) {
                request = p.substring("request=".length());
                if (!TOKEN.matcher(request).matches()) {
                    return;
                }
            } else if (p.startsWith("owner=") && owner == null) {
                owner = p.substring("owner=".length());
                if (!TOKEN.matcher(owner).matches()) {
                    return;
                }
            } else {
                return; // unknown option, duplicate, or empty
            }
        }
        if (owner != null && request == null) {
            return;
        }
        String state;
        if (parts[0].equalsIgnoreCase("started")) {
            state = "started";
        } else if (parts[0].equalsIgnoreCase("ok")) {
            state = "ok";
        } else if (parts[0].equalsIgnoreCase("failed")) {
            state = "failed";
        } else {
            return;
        }
        boolean accepted = queue.onBuild(owner, state);
        if (request != null) {
            String message = (accepted ? "BUILD_ACK " : "BUILD_REJECTED ") + request + " " + state
                    + (owner != null ? " owner=" + owner : "");
            reply(from, Events.unescapedLine(Events.INFO, message));
        }
    }

    private void reload(ClientConnection from, String line) {
        String[] parts = line.split("\\s+");
        if (parts.length != 3) {
            return;
        }
        String action = parts[1];
        if (!action.equals("pause") && !action.equals("resume") && !action.equals("status")) {
            return;
        }
        if (!parts[2].startsWith("request=")) {
            return;
        }
        String token = parts[2].substring("request=".length());
        if (!TOKEN.matcher(token).matches()) {
            return;
        }
        String snapshot = queue.control(action);
        reply(from, Events.line(Events.INFO, "RELOAD_STATE " + token + " " + action + " " + snapshot));
    }

    private void verify(ClientConnection from, String line) {
        String[] parts = line.split("\\s+");
        if (parts.length != 4) {
            return;
        }
        String token = parts[1];
        String className = parts[2];
        String sha = parts[3];
        if (!TOKEN.matcher(token).matches() || !isBinaryName(className) || !SHA256.matcher(sha).matches()) {
            return;
        }
        reply(from, Events.line(Events.INFO, "VERIFY_RESULT " + token + " " + ledger.verify(token, className, sha)));
    }

    /** Dot-separated Java identifiers, at most 256 chars, no identifier-ignorable code points. */
    static boolean isBinaryName(String s) {
        if (s.isEmpty() || s.length() > MAX_CLASS_NAME_CHARS) {
            return false;
        }
        if (s.codePoints().anyMatch(Character::isIdentifierIgnorable)) {
            return false;
        }
        for (String segment : s.split("\\.", -1)) {
            if (segment.isEmpty()) {
                return false;
            }
            int first = segment.codePointAt(0);
            if (!Character.isJavaIdentifierStart(first)) {
                return false;
            }
            for (int i = Character.charCount(first); i < segment.length(); ) {
                int cp = segment.codePointAt(i);
                if (!Character.isJavaIdentifierPart(cp)) {
                    return false;
                }
                i += Character.charCount(cp);
            }
        }
        return true;
    }

    private void broadcastAll(List<String> lines) {
        for (String l : lines) {
            status.info(l);
        }
    }

    private void reply(ClientConnection to, String line) {
        long dropped = to.enqueue(line);
        if (dropped == 1 || (dropped > 0 && dropped % 1000 == 0)) {
            status.warn("Status client is not keeping up \u2014 dropped " + dropped
                    + (dropped == 1 ? " event" : " events") + ". Reload is unaffected.");
        }
    }
}
