package dev.buildguard.refagent;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * The loopback status server of docs/agent-protocol.md#1 and docs/agent-protocol.md#3: listener with backlog 5, atomic
 * port file, at most 5 clients, CONNECTED handshake, fixed-rate heartbeats and broadcasts.
 */
final class StatusServer {
    static final int MAX_CLIENTS = 5;
    static final int BACKLOG = 5;
    static final long HEARTBEAT_SECONDS = 10;

    private final String agentRelease;
    private final Status status;
    private final BiConsumer<ClientConnection, String> onCommand;
    private final boolean tcpNoDelay;
    private final List<ClientConnection> clients = new ArrayList<>();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "buildguard-refagent-timer");
        t.setDaemon(true);
        return t;
    });
    private volatile boolean running;
    private ServerSocket server;
    private Path portFile;
    private boolean portFileWritten;
    private int nextId;

    /**
     * With {@code tcpNoDelay}, each accepted connection sends every line at once; without it,
     * the JVM's default, Nagle's algorithm holds a line while an earlier one is unacknowledged.
     */
    StatusServer(String agentRelease, Status status, BiConsumer<ClientConnection, String> onCommand,
            boolean tcpNoDelay) {
        this.agentRelease = agentRelease;
        this.status = status;
        this.onCommand = onCommand;
        this.tcpNoDelay = tcpNoDelay;
    }

    /** Binds, writes the port file (if any), and starts accepting and heartbeating. */
    synchronized int start(int port, Path portFile) throws IOException {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        server = new ServerSocket(port, BACKLOG, loopback);
        server.setSoTimeout(2000);
        running = true;
        int bound = server.getLocalPort();
        this.portFile = portFile;
        if (portFile != null) {
            portFileWritten = writePortFile(portFile, bound);
        }
        Thread acceptor = new Thread(this::acceptLoop, "buildguard-refagent-accept");
        acceptor.setDaemon(true);
        acceptor.start();
        timer.scheduleAtFixedRate(this::heartbeat, HEARTBEAT_SECONDS, HEARTBEAT_SECONDS, TimeUnit.SECONDS);
        Status.console("Status server listening on 127.0.0.1:" + bound
                + (portFileWritten ? " (port file " + portFile + ")" : ""));
        return bound;
    }

    /** Schedules a periodic task on the server's timer thread. */
    void every(long seconds, Runnable task) {
        timer.scheduleAtFixedRate(() -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                Status.console("Periodic task failed: " + e);
            }
        }, seconds, seconds, TimeUnit.SECONDS);
    }

    private boolean writePortFile(Path target, int port) {
        try {
            if (Files.isSymbolicLink(target)) {
                Status.console("WARN Port file is a symlink \u2014 refusing to write: " + target);
                return false;
            }
            Path dir = target.toAbsolutePath().getParent();
            Files.createDirectories(dir);
            Set<PosixFilePermission> perms = PosixFilePermissions.fromString("rw-r--r--");
            if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                try {
                    perms = Files.getPosixFilePermissions(target, LinkOption.NOFOLLOW_LINKS);
                } catch (UnsupportedOperationException | IOException ignored) {
                    // keep the default permissions
                }
            }
            Path tmp = Files.createTempFile(dir, "." + target.getFileName(), ".reclazz-tmp");
            try {
                Files.write(tmp, Integer.toString(port).getBytes(StandardCharsets.UTF_8));
                try {
                    Files.setPosixFilePermissions(tmp, perms);
                } catch (UnsupportedOperationException ignored) {
                    // not a POSIX file system
                }
                try {
                    Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                Files.deleteIfExists(tmp);
            }
            return true;
        } catch (IOException | RuntimeException e) {
            Status.console("WARN Could not write port file " + target + ": " + e.getMessage());
            return false;
        }
    }

    private void acceptLoop() {
        while (running) {
            Socket s;
            try {
                s = server.accept();
            } catch (SocketTimeoutException e) {
                continue;
            } catch (IOException e) {
                if (!running) {
                    return;
                }
                continue; // a failed accept of one client does not stop the loop
            }
            if (tcpNoDelay) {
                try {
                    s.setTcpNoDelay(true);
                } catch (IOException e) {
                    Status.console("WARN Could not set TCP_NODELAY on a status connection: " + e.getMessage());
                }
            }
            register(s);
        }
    }

    private void register(Socket s) {
        synchronized (clients) {
            clients.removeIf(ClientConnection::isDead);
            if (!running || clients.size() >= MAX_CLIENTS) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // nothing to do
                }
                return;
            }
            ClientConnection c = new ClientConnection(s, ++nextId);
            // Welcome first, then register for broadcasts: CONNECTED is always the first line.
            c.enqueue(Events.connected(agentRelease));
            clients.add(c);
            c.start(onCommand);
        }
    }

    private void heartbeat() {
        synchronized (clients) {
            if (clients.isEmpty()) {
                return;
            }
        }
        broadcast(Events.line(Events.HEARTBEAT, ""));
    }

    /** Sends a line to every live client; a client with a full outbox loses it (docs/agent-protocol.md#1.5). */
    void broadcast(String line) {
        List<Long> warnAt = new ArrayList<>();
        synchronized (clients) {
            clients.removeIf(ClientConnection::isDead);
            for (ClientConnection c : clients) {
                long dropped = c.enqueue(line);
                if (dropped == 1 || (dropped > 0 && dropped % 1000 == 0)) {
                    warnAt.add(dropped);
                }
            }
        }
        for (long n : warnAt) {
            status.warn("Status client is not keeping up \u2014 dropped " + n + (n == 1 ? " event" : " events")
                    + ". Reload is unaffected.");
        }
    }

    int clientCount() {
        synchronized (clients) {
            clients.removeIf(ClientConnection::isDead);
            return clients.size();
        }
    }

    /** Stops accepting, closes every client and deletes the port file this server wrote. */
    synchronized void stop() {
        if (!running) {
            return;
        }
        running = false;
        timer.shutdownNow();
        try {
            server.close();
        } catch (IOException ignored) {
            // closing is best effort
        }
        synchronized (clients) {
            for (ClientConnection c : clients) {
                c.close();
            }
            clients.clear();
        }
        if (portFileWritten) {
            try {
                Files.deleteIfExists(portFile);
            } catch (IOException ignored) {
                // a stale port file is normal (docs/agent-protocol.md#1.2)
            }
        }
    }
}
