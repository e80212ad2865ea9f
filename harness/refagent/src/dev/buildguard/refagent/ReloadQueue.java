package dev.buildguard.refagent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The reload queue: pending class files, the BUILD hold state machine of docs/agent-protocol.md#5,
 * the manual pause of docs/agent-protocol.md#6, and the single reload thread that captures bytes and hands batches
 * to the {@link Redefiner}.
 */
final class ReloadQueue implements ClassWatcher.Listener {
    /** Quiet period that closes an automatic batch. */
    static final long GRACE_MS = 100;
    /** Longest an automatic batch waits for more files. */
    static final long MAX_GRACE_MS = 1000;
    /** Age after which a hold earns its one warning. */
    static final Duration HOLD_WARNING_AFTER = Duration.ofMinutes(5);

    private final Object lock = new Object();
    private final Status status;
    private final ClassWatcher watcher;
    private final Redefiner redefiner;
    private final ExecutorService reloadThread = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "buildguard-refagent-reload");
        t.setDaemon(true);
        return t;
    });

    // Guarded by lock.
    private boolean holding;
    private String owner;
    private long generation;
    private Instant heldSince;
    private boolean holdWarned;
    private boolean paused;
    private long pauseEpoch;
    private boolean admissionScheduled;
    private long lastArrivalNanos;
    private final LinkedHashMap<Path, ClassWatcher.Change> pending = new LinkedHashMap<>();

    ReloadQueue(Status status, ClassWatcher watcher, Redefiner redefiner) {
        this.status = status;
        this.watcher = watcher;
        this.redefiner = redefiner;
    }

    @Override
    public void classFilesChanged(List<ClassWatcher.Change> changes) {
        synchronized (lock) {
            for (ClassWatcher.Change c : changes) {
                pending.remove(c.file); // newest event wins, and moves to the end
                pending.put(c.file, c);
            }
            lastArrivalNanos = System.nanoTime();
            scheduleAdmissionLocked();
        }
    }

    private void scheduleAdmissionLocked() {
        if (holding || paused || admissionScheduled || pending.isEmpty()) {
            return;
        }
        admissionScheduled = true;
        submit(this::admit);
    }

    private void submit(Runnable task) {
        reloadThread.execute(() -> {
            try {
                task.run();
            } catch (RuntimeException | LinkageError e) {
                status.error("Reload task failed: " + e);
            }
        });
    }

    /** Automatic admission: waits for a quiet grace period, then applies all pending files. */
    private void admit() {
        long start = System.nanoTime();
        while (true) {
            long quietMs;
            synchronized (lock) {
                quietMs = (System.nanoTime() - lastArrivalNanos) / 1_000_000L;
            }
            long waitedMs = (System.nanoTime() - start) / 1_000_000L;
            if (quietMs >= GRACE_MS || waitedMs >= MAX_GRACE_MS) {
                break;
            }
            try {
                Thread.sleep(Math.max(1, Math.min(GRACE_MS - quietMs, MAX_GRACE_MS - waitedMs)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        List<ClassWatcher.Change> batch;
        synchronized (lock) {
            admissionScheduled = false;
            if (holding || paused) {
                return; // stays pending
            }
            batch = drainLocked();
        }
        List<Redefiner.Captured> captured = new ArrayList<>();
        for (ClassWatcher.Change c : batch) {
            try {
                byte[] bytes = Files.readAllBytes(c.file);
                captured.add(new Redefiner.Captured(c, bytes));
            } catch (NoSuchFileException e) {
                Status.console("Class file vanished before it could be read: " + c.file);
            } catch (IOException e) {
                status.error("Failed to read class file " + c.file + ": " + e.getMessage());
            }
        }
        redefiner.apply(captured);
    }

    /** Acceptance of a successful owned build (docs/agent-protocol.md#5 steps 1-6), on the reload thread. */
    private void accept(long gen) {
        long pauseAtStart;
        synchronized (lock) {
            if (!holding || generation != gen) {
                return;
            }
            pauseAtStart = pauseEpoch;
        }
        try {
            watcher.scanNow();
        } catch (IOException | RuntimeException e) {
            status.error("Could not scan the build output: " + e);
            return;
        }
        List<ClassWatcher.Change> batch;
        synchronized (lock) {
            if (!holding || generation != gen) {
                status.info("A later build superseded this success; files remain held");
                return;
            }
            batch = drainLocked();
        }
        List<Redefiner.Captured> captured = new ArrayList<>();
        for (ClassWatcher.Change c : batch) {
            try {
                captured.add(new Redefiner.Captured(c, Files.readAllBytes(c.file)));
            } catch (NoSuchFileException e) {
                Status.console("Class file vanished before it could be captured: " + c.file);
            } catch (IOException e) {
                status.error("Failed to read class file " + c.file + ": " + e.getMessage());
                synchronized (lock) {
                    restoreLocked(batch);
                }
                return;
            }
        }
        synchronized (lock) {
            if (!holding || generation != gen) {
                restoreLocked(batch);
                status.info("A later build superseded this success; files remain held");
                return;
            }
            holding = false;
            owner = null;
            heldSince = null;
            holdWarned = false;
            if (paused || pauseEpoch != pauseAtStart) {
                restoreLocked(batch);
                status.info("Build hold released; " + batch.size()
                        + " class files stay pending while automatic reload is paused");
                return;
            }
        }
        redefiner.apply(captured);
    }

    private List<ClassWatcher.Change> drainLocked() {
        List<ClassWatcher.Change> batch = new ArrayList<>(pending.values());
        pending.clear();
        return batch;
    }

    private void restoreLocked(List<ClassWatcher.Change> batch) {
        for (ClassWatcher.Change c : batch) {
            pending.putIfAbsent(c.file, c); // a newer observation wins
        }
    }

    /**
     * BUILD from {@code buildOwner} (null = unowned) with state started|ok|failed (lower case).
     * Returns whether the command was accepted (docs/agent-protocol.md#5 table).
     */
    boolean onBuild(String buildOwner, String state) {
        synchronized (lock) {
            if (holding && !Objects.equals(owner, buildOwner)) {
                return false;
            }
            if (!holding) {
                if (buildOwner != null && !state.equals("started")) {
                    return false;
                }
                if (buildOwner == null && state.equals("ok")) {
                    submit(this::plainScan);
                    return true;
                }
                holding = true;
                owner = buildOwner;
                generation++;
                heldSince = Instant.now();
                holdWarned = false;
                status.info("Build " + state + "; holding " + pending.size() + " class files until BUILD ok");
                return true;
            }
            if (state.equals("ok")) {
                long gen = generation;
                submit(() -> accept(gen));
                return true;
            }
            generation++;
            if (state.equals("started")) {
                heldSince = Instant.now();
            }
            status.info("Build " + state + "; holding " + pending.size() + " class files until BUILD ok");
            return true;
        }
    }

    /** Unowned BUILD ok on a free agent: a plain scan of the build output. */
    private void plainScan() {
        try {
            watcher.scanNow();
        } catch (IOException | RuntimeException e) {
            status.error("Could not scan the build output: " + e);
        }
    }

    /** RELOAD pause|resume|status; returns the snapshot taken right after the action (docs/agent-protocol.md#6). */
    String control(String action) {
        synchronized (lock) {
            if (action.equals("pause")) {
                if (!paused) {
                    paused = true;
                    pauseEpoch++;
                }
            } else if (action.equals("resume")) {
                paused = false;
                submit(this::resumeScan);
            }
            return snapshotLocked();
        }
    }

    private void resumeScan() {
        plainScan();
        synchronized (lock) {
            lastArrivalNanos = 0; // nothing to wait for: admit what is pending now
            scheduleAdmissionLocked();
        }
    }

    String snapshot() {
        synchronized (lock) {
            return snapshotLocked();
        }
    }

    private String snapshotLocked() {
        return "paused=" + paused + " pendingClasses=" + pending.size() + " pendingActions=0 buildHold="
                + holdKindLocked();
    }

    String holdKind() {
        synchronized (lock) {
            return holdKindLocked();
        }
    }

    private String holdKindLocked() {
        if (!holding) {
            return "none";
        }
        return owner == null ? "legacy" : "named";
    }

    /** The queue's HEALTH line, or null when nothing is held or paused. */
    String healthLine() {
        synchronized (lock) {
            if (holding) {
                return "Build holding " + pending.size() + " class files since " + heldSince
                        + "; waiting for BUILD ok";
            }
            if (paused) {
                return "Automatic reload paused; pending class files=" + pending.size() + ", pending actions=0";
            }
            return null;
        }
    }

    /** Pending class files (for DIAGNOSE). */
    boolean isPending(String className) {
        synchronized (lock) {
            for (ClassWatcher.Change c : pending.values()) {
                if (c.className.equals(className)) {
                    return true;
                }
            }
            return false;
        }
    }

    /** Called every 5 s: one WARN per hold older than five minutes. */
    void checkHoldAge() {
        synchronized (lock) {
            if (!holding || holdWarned || heldSince == null
                    || Duration.between(heldSince, Instant.now()).compareTo(HOLD_WARNING_AFTER) < 0) {
                return;
            }
            holdWarned = true;
            status.warn("Build result missing after five minutes; Build holding " + pending.size()
                    + " class files since " + heldSince + "; waiting for BUILD ok");
        }
    }

    void stop() {
        reloadThread.shutdownNow();
    }
}
