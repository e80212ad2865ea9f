package dev.buildguard.refagent;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Watches class output directories by polling. After {@code startupDelaySec} it registers the
 * directories (a baseline of every existing {@code .class} file, hashed) and prints
 * "Watching N directories: …". A file whose size or modification time changes is reported once
 * it has been quiet for {@code debounceMs}; a file whose bytes equal the last reported bytes is
 * not reported again (identical-byte recompiles produce no new attempt, docs/agent-protocol.md#8). Deleted files are
 * not reported.
 */
final class ClassWatcher {
    static final String STARTING = "starting";
    static final String WATCHING = "watching";
    static final String STOPPED = "stopped";

    /** One observed class file change. */
    static final class Change {
        final Path root;
        final Path file;
        final String className;

        Change(Path root, Path file, String className) {
            this.root = root;
            this.file = file;
            this.className = className;
        }
    }

    /** Receives the changes of one scan, in one call. */
    interface Listener {
        void classFilesChanged(List<Change> changes);
    }

    private static final class FileState {
        final Path root;
        final String className;
        FileTime mtime;
        long size;
        String reportedSha;
        boolean dirty;
        long changedAtNanos;

        FileState(Path root, String className) {
            this.root = root;
            this.className = className;
        }
    }

    private final List<Path> roots;
    private final long debounceMs;
    private final int startupDelaySec;
    private final long pollMs;
    private final Object scanLock = new Object();
    private final Object wake = new Object();
    private final Map<Path, FileState> files = new HashMap<>();
    private volatile String state = STARTING;
    private volatile List<Path> registered = Collections.emptyList();
    private volatile List<Path> refused = Collections.emptyList();
    private volatile boolean scanRequested;
    private volatile boolean stopped;
    private Listener listener;

    ClassWatcher(List<Path> roots, long debounceMs, int startupDelaySec) {
        this.roots = List.copyOf(roots);
        this.debounceMs = debounceMs;
        this.startupDelaySec = startupDelaySec;
        this.pollMs = Math.max(20, Math.min(250, debounceMs / 2));
    }

    String state() {
        return state;
    }

    /** Registered directories that still exist. */
    List<Path> liveDirectories() {
        List<Path> live = new ArrayList<>();
        for (Path p : registered) {
            if (Files.isDirectory(p)) {
                live.add(p);
            }
        }
        return live;
    }

    int refusedCount() {
        return refused.size();
    }

    void start(Listener listener) {
        this.listener = listener;
        Thread t = new Thread(this::run, "buildguard-refagent-watcher");
        t.setDaemon(true);
        t.start();
    }

    void stop() {
        stopped = true;
        state = STOPPED;
        synchronized (wake) {
            wake.notifyAll();
        }
    }

    /** SCAN: look at the directories now (asynchronously, on the watcher thread). */
    void requestScan() {
        scanRequested = true;
        synchronized (wake) {
            wake.notifyAll();
        }
    }

    /** Scans now on the calling thread, without debounce; listeners are notified before return. */
    void scanNow() throws IOException {
        if (STARTING.equals(state) || stopped) {
            return;
        }
        scan(true);
    }

    /** Paths (relative to their watched root) of known class files with this binary name. */
    List<Path> filesFor(String className) {
        List<Path> out = new ArrayList<>();
        synchronized (scanLock) {
            for (Map.Entry<Path, FileState> e : files.entrySet()) {
                if (e.getValue().className.equals(className) && e.getValue().mtime != null) {
                    out.add(e.getKey());
                }
            }
        }
        Collections.sort(out);
        return out;
    }

    private void run() {
        try {
            sleep(startupDelaySec * 1000L, false);
            if (stopped) {
                return;
            }
            register();
            while (!stopped) {
                sleep(pollMs, true);
                if (stopped) {
                    return;
                }
                boolean immediate = scanRequested;
                scanRequested = false;
                try {
                    scan(immediate);
                } catch (IOException | RuntimeException e) {
                    Status.console("WARN Watcher scan failed: " + e);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits up to ms; returns early on stop, and on a SCAN request when scanWakes. */
    private void sleep(long ms, boolean scanWakes) throws InterruptedException {
        long deadline = System.nanoTime() + ms * 1_000_000L;
        synchronized (wake) {
            while (!stopped && !(scanWakes && scanRequested)) {
                long left = (deadline - System.nanoTime()) / 1_000_000L;
                if (left <= 0) {
                    return;
                }
                wake.wait(left);
            }
        }
    }

    private void register() {
        List<Path> ok = new ArrayList<>();
        List<Path> bad = new ArrayList<>();
        synchronized (scanLock) {
            for (Path root : roots) {
                if (!Files.isDirectory(root)) {
                    bad.add(root);
                    continue;
                }
                ok.add(root);
                Map<Path, BasicFileAttributes> found = new LinkedHashMap<>();
                walk(root, found);
                for (Map.Entry<Path, BasicFileAttributes> e : found.entrySet()) {
                    FileState st = new FileState(root, classNameOf(root, e.getKey()));
                    st.mtime = e.getValue().lastModifiedTime();
                    st.size = e.getValue().size();
                    try {
                        st.reportedSha = sha256(Files.readAllBytes(e.getKey()));
                    } catch (IOException ex) {
                        st.dirty = true; // retry on the next scan
                        st.changedAtNanos = System.nanoTime();
                    }
                    files.put(e.getKey(), st);
                }
            }
            registered = List.copyOf(ok);
            refused = List.copyOf(bad);
            state = WATCHING;
        }
        StringBuilder msg = new StringBuilder("Watching " + ok.size() + (ok.size() == 1 ? " directory" : " directories"));
        if (!ok.isEmpty()) {
            msg.append(": ").append(String.join(", ", ok.stream().map(Path::toString).toArray(String[]::new)));
        }
        if (!bad.isEmpty()) {
            msg.append(" (could not watch ").append(bad.size()).append(": ")
                    .append(String.join(", ", bad.stream().map(Path::toString).toArray(String[]::new))).append(')');
        }
        Status.console(msg.toString());
    }

    private void scan(boolean immediate) throws IOException {
        synchronized (scanLock) {
            if (STARTING.equals(state)) {
                return;
            }
            long now = System.nanoTime();
            Map<Path, BasicFileAttributes> found = new LinkedHashMap<>();
            for (Path root : registered) {
                if (Files.isDirectory(root)) {
                    walk(root, found);
                }
            }
            for (Map.Entry<Path, BasicFileAttributes> e : found.entrySet()) {
                FileState st = files.get(e.getKey());
                BasicFileAttributes a = e.getValue();
                if (st == null) {
                    Path root = rootOf(e.getKey());
                    st = new FileState(root, classNameOf(root, e.getKey()));
                    files.put(e.getKey(), st);
                }
                if (st.mtime == null || !st.mtime.equals(a.lastModifiedTime()) || st.size != a.size()) {
                    st.mtime = a.lastModifiedTime();
                    st.size = a.size();
                    st.dirty = true;
                    st.changedAtNanos = now;
                }
            }
            List<Change> changes = new ArrayList<>();
            for (Map.Entry<Path, FileState> e : files.entrySet()) {
                FileState st = e.getValue();
                if (!found.containsKey(e.getKey())) {
                    st.mtime = null; // deleted: forget the stat, keep the hash for dedupe
                    st.dirty = false;
                    continue;
                }
                if (!st.dirty || (!immediate && now - st.changedAtNanos < debounceMs * 1_000_000L)) {
                    continue;
                }
                String sha;
                try {
                    sha = sha256(Files.readAllBytes(e.getKey()));
                } catch (NoSuchFileException ex) {
                    st.mtime = null;
                    st.dirty = false;
                    continue;
                } catch (IOException ex) {
                    continue; // stays dirty, retried on the next scan
                }
                st.dirty = false;
                if (sha.equals(st.reportedSha)) {
                    continue;
                }
                st.reportedSha = sha;
                changes.add(new Change(st.root, e.getKey(), st.className));
            }
            if (!changes.isEmpty() && listener != null) {
                changes.sort((x, y) -> x.file.compareTo(y.file));
                listener.classFilesChanged(changes);
            }
        }
    }

    private Path rootOf(Path file) {
        Path best = null;
        for (Path r : registered) {
            if (file.startsWith(r) && (best == null || r.getNameCount() > best.getNameCount())) {
                best = r;
            }
        }
        return best;
    }

    private static void walk(Path root, Map<Path, BasicFileAttributes> out) {
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                    String name = file.getFileName().toString();
                    if (attrs.isRegularFile() && name.endsWith(".class")
                            && !name.equals("module-info.class") && !name.equals("package-info.class")) {
                        out.put(file, attrs);
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException exc) {
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException ignored) {
            // unreadable directory: nothing found there this time
        }
    }

    /** {@code com/acme/X.class} relative to the root becomes {@code com.acme.X}. */
    static String classNameOf(Path root, Path file) {
        Path rel = root.relativize(file);
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < rel.getNameCount(); i++) {
            if (i > 0) {
                b.append('.');
            }
            b.append(rel.getName(i).toString());
        }
        String s = b.toString();
        return s.endsWith(".class") ? s.substring(0, s.length() - ".class".length()) : s;
    }

    static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 unavailable", e);
        }
    }
}
