package dev.buildguard.refagent;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

/**
 * One status-socket client: a reader thread that decodes command lines exactly as
 * docs/agent-protocol.md#1.4 and a writer thread draining a bounded outbox of 1000 lines (docs/agent-protocol.md#1.5).
 */
final class ClientConnection {
    /** Longest accepted command line in UTF-16 code units (docs/agent-protocol.md#1.4). */
    static final int MAX_COMMAND_CHARS = 512;
    /** Outbox capacity; a full outbox drops lines for this client only (docs/agent-protocol.md#1.5). */
    static final int OUTBOX_CAPACITY = 1000;

    private final Socket socket;
    private final int id;
    private final ArrayBlockingQueue<String> outbox = new ArrayBlockingQueue<>(OUTBOX_CAPACITY);
    private final AtomicLong drops = new AtomicLong();
    private volatile boolean dead;
    private Thread writer;

    ClientConnection(Socket socket, int id) {
        this.socket = socket;
        this.id = id;
    }

    boolean isDead() {
        return dead || socket.isClosed();
    }

    /**
     * Enqueues a line without blocking. Returns 0 when queued (or the connection is dead),
     * otherwise the running number of dropped lines for this client.
     */
    long enqueue(String line) {
        if (isDead()) {
            return 0;
        }
        if (outbox.offer(line)) {
            return 0;
        }
        return drops.incrementAndGet();
    }

    /** Starts the writer and reader threads; commands go to {@code onCommand}. */
    void start(BiConsumer<ClientConnection, String> onCommand) {
        writer = new Thread(this::writeLoop, "buildguard-refagent-writer-" + id);
        writer.setDaemon(true);
        writer.start();
        Thread reader = new Thread(() -> readLoop(onCommand), "buildguard-refagent-reader-" + id);
        reader.setDaemon(true);
        reader.start();
    }

    private void writeLoop() {
        String eol = System.lineSeparator();
        try {
            Writer w = new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8);
            while (!isDead()) {
                String line = outbox.poll(500, TimeUnit.MILLISECONDS);
                if (line == null) {
                    continue;
                }
                w.write(line);
                w.write(eol);
                w.flush();
            }
        } catch (IOException | InterruptedException e) {
            // A write error marks the connection dead (docs/agent-protocol.md#1.5).
        } finally {
            close();
        }
    }

    private void readLoop(BiConsumer<ClientConnection, String> onCommand) {
        try {
            BufferedReader r = new BufferedReader(
                    new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            StringBuilder line = new StringBuilder();
            while (!isDead()) {
                int c = r.read();
                if (c == -1) {
                    if (line.length() > 0) {
                        onCommand.accept(this, line.toString());
                    }
                    break;
                }
                if (c == '\r') {
                    continue;
                }
                if (c == '\n') {
                    String command = line.toString();
                    line.setLength(0);
                    onCommand.accept(this, command);
                    continue;
                }
                if (line.length() >= MAX_COMMAND_CHARS) {
                    break; // overlong command: close silently
                }
                line.append((char) c);
            }
        } catch (IOException e) {
            // Any read error closes the connection.
        } finally {
            close();
        }
    }

    void close() {
        dead = true;
        try {
            socket.close();
        } catch (IOException ignored) {
            // Closing is best effort.
        }
        Thread w = writer;
        if (w != null && w != Thread.currentThread()) {
            w.interrupt();
        }
    }
}
