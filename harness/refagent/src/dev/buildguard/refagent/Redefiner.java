package dev.buildguard.refagent;

import java.lang.instrument.ClassDefinition;
import java.lang.instrument.Instrumentation;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * Applies one captured batch with a single {@link Instrumentation#redefineClasses} call of all
 * loaded members, reports RELOAD/ERROR lines, and brackets the batch with VERIFY receipts
 * (running, then applied / failed / unverified, docs/agent-protocol.md#8). Classes that are not loaded yet are
 * recorded as such: the JVM will read the new bytes from disk when it first loads them.
 */
final class Redefiner {
    /** Bound of the restart ledger shown by PENDING. */
    static final int MAX_RESTART_ENTRIES = 200;
    /** Bound of the not-loaded record shown by DIAGNOSE. */
    static final int MAX_NOT_LOADED = 512;

    /** The captured bytes of one class file. */
    static final class Captured {
        final ClassWatcher.Change change;
        final byte[] bytes;
        final String sha256;

        Captured(ClassWatcher.Change change, byte[] bytes) {
            this.change = change;
            this.bytes = bytes;
            this.sha256 = ClassWatcher.sha256(bytes);
        }
    }

    private enum Outcome { APPLIED, NOT_LOADED, FAILED }

    private final Instrumentation inst;
    private final ReceiptLedger ledger;
    private final Status status;

    // Guarded by this.
    private long reloads;
    private long failures;
    private Instant lastChange;
    private final LinkedHashMap<String, Integer> restartLedger = new LinkedHashMap<>();
    private final LinkedHashSet<String> notLoaded = new LinkedHashSet<>();

    Redefiner(Instrumentation inst, ReceiptLedger ledger, Status status) {
        this.inst = inst;
        this.ledger = ledger;
        this.status = status;
    }

    void apply(List<Captured> batch) {
        if (batch.isEmpty()) {
            return;
        }
        long t0 = System.nanoTime();
        Map<String, Integer> namesInBatch = new HashMap<>();
        for (Captured c : batch) {
            namesInBatch.merge(c.change.className, 1, Integer::sum);
        }
        List<ReceiptLedger.Receipt> receipts = new ArrayList<>();
        for (Captured c : batch) {
            receipts.add(ledger.start(c.change.className, c.sha256, c.change.file.toString()));
        }
        Outcome[] outcomes = new Outcome[batch.size()];
        int[] loadedCount = new int[batch.size()];
        String failure = null;
        boolean threw = false;
        status.beginProblemCount();
        int problems;
        try {
            if (batch.size() > 1) {
                status.info(batch.size() + " class files changed together; reloading them as one batch");
            }
            Map<String, List<Class<?>>> loaded = new HashMap<>();
            for (Class<?> k : inst.getAllLoadedClasses()) {
                if (namesInBatch.containsKey(k.getName())) {
                    loaded.computeIfAbsent(k.getName(), n -> new ArrayList<>()).add(k);
                }
            }
            List<ClassDefinition> defs = new ArrayList<>();
            for (int i = 0; i < batch.size(); i++) {
                Captured c = batch.get(i);
                List<Class<?>> classes = loaded.getOrDefault(c.change.className, List.of());
                loadedCount[i] = classes.size();
                if (classes.isEmpty()) {
                    outcomes[i] = Outcome.NOT_LOADED;
                    continue;
                }
                for (Class<?> k : classes) {
                    defs.add(new ClassDefinition(k, c.bytes));
                }
            }
            boolean unsupported = false;
            if (!defs.isEmpty()) {
                try {
                    inst.redefineClasses(defs.toArray(new ClassDefinition[0]));
                } catch (UnsupportedOperationException e) {
                    failure = "the class shape changed (" + e.getMessage() + "); restart to pick it up";
                    unsupported = true;
                } catch (Exception | LinkageError e) {
                    failure = e.getClass().getSimpleName() + ": " + e.getMessage();
                }
            }
            long ms = (System.nanoTime() - t0) / 1_000_000L;
            for (int i = 0; i < batch.size(); i++) {
                String name = batch.get(i).change.className;
                if (outcomes[i] == Outcome.NOT_LOADED) {
                    recordNotLoaded(name);
                    status.info(name + " is not loaded yet; the JVM will use the new bytes when it loads the class");
                } else if (failure == null) {
                    outcomes[i] = Outcome.APPLIED;
                    status.emit(Events.RELOAD, "Reloaded " + name + " (" + ms + "ms)");
                } else {
                    outcomes[i] = Outcome.FAILED;
                    status.error("Could not reload " + name + ": " + failure);
                    if (unsupported) {
                        recordRestart(name, "class shape changed (methods or fields added or removed)");
                    }
                }
            }
            if (batch.size() > 1) {
                status.info("Batch of " + batch.size() + " class files done ("
                        + (System.nanoTime() - t0) / 1_000_000L + "ms)");
            }
        } catch (RuntimeException e) {
            threw = true;
            failure = e.toString();
            status.error("Reload batch failed: " + e);
        } finally {
            problems = status.endProblemCount();
        }
        Instant done = Instant.now();
        synchronized (this) {
            lastChange = done;
        }
        for (int i = 0; i < batch.size(); i++) {
            String name = batch.get(i).change.className;
            String st;
            String detail;
            if (threw || outcomes[i] == Outcome.FAILED) {
                st = ReceiptLedger.FAILED;
                detail = "Redefinition failed: " + failure;
            } else if (outcomes[i] == Outcome.NOT_LOADED) {
                st = ReceiptLedger.UNVERIFIED;
                detail = "Class was not loaded; the new bytes were not redefined";
            } else if (loadedCount[i] != 1 || namesInBatch.get(name) != 1) {
                st = ReceiptLedger.UNVERIFIED;
                detail = "Class is not unique (" + loadedCount[i] + " loaded copies, "
                        + namesInBatch.get(name) + " files in the batch)";
            } else if (problems > 0) {
                st = ReceiptLedger.UNVERIFIED;
                detail = "The batch reported " + problems + " warning(s) or error(s)";
            } else {
                st = ReceiptLedger.APPLIED;
                detail = "Redefined from the captured bytes in a batch of " + batch.size();
            }
            synchronized (this) {
                if (st.equals(ReceiptLedger.APPLIED)) {
                    reloads++;
                } else if (st.equals(ReceiptLedger.FAILED)) {
                    failures++;
                }
            }
            ledger.finish(receipts.get(i), st, detail, done);
        }
    }

    private synchronized void recordNotLoaded(String name) {
        notLoaded.remove(name);
        notLoaded.add(name);
        while (notLoaded.size() > MAX_NOT_LOADED) {
            notLoaded.remove(notLoaded.iterator().next());
        }
    }

    private synchronized void recordRestart(String name, String concern) {
        String key = name + ": " + concern;
        restartLedger.merge(key, 1, Integer::sum);
        while (restartLedger.size() > MAX_RESTART_ENTRIES) {
            restartLedger.remove(restartLedger.keySet().iterator().next());
        }
    }

    synchronized boolean wasNotLoaded(String name) {
        return notLoaded.contains(name);
    }

    synchronized long reloads() {
        return reloads;
    }

    synchronized long failures() {
        return failures;
    }

    synchronized Instant lastChange() {
        return lastChange;
    }

    synchronized Map<String, Integer> restartLedger() {
        return new LinkedHashMap<>(restartLedger);
    }

    /** How many classes with this binary name are loaded right now. */
    int loadedCopies(String name) {
        int n = 0;
        for (Class<?> k : inst.getAllLoadedClasses()) {
            if (k.getName().equals(name)) {
                n++;
            }
        }
        return n;
    }
}
