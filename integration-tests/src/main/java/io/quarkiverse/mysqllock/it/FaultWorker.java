package io.quarkiverse.mysqllock.it;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.ThreadLocalRandom;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.named.NamedLockEngine;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;

/**
 * The fault suite's workload (see {@code FaultSuite} in the tests): threads that loop acquiring one of a few hot
 * names, doing a fenced write to the {@code resource} table inside the lock, and releasing it.
 * <p>
 * Every critical section is journaled to a local file, one {@code write} per event, because the database is one of
 * the things under attack and a SIGKILL must not lose what was already recorded: {@code S} (acquired, with the fencing
 * token and the times the acquisition returned and was requested), {@code L} (told of a loss), {@code E} (the write's outcome as this holder saw it, before release),
 * {@code R} (released). Times are wall-clock microseconds, comparable across the processes of one host.
 */
@Singleton
@Path("/fault-worker")
public class FaultWorker {

    private static final Logger LOG = Logger.getLogger(FaultWorker.class);

    @Inject
    LockManager locks;
    @Inject
    AgroalDataSource dataSource;

    @ConfigProperty(name = "fault-worker.enabled", defaultValue = "false")
    boolean enabled;
    @ConfigProperty(name = "fault-worker.id", defaultValue = "w")
    String id;
    @ConfigProperty(name = "fault-worker.threads", defaultValue = "8")
    int threads;
    @ConfigProperty(name = "fault-worker.names", defaultValue = "hot-1,hot-2,hot-3")
    List<String> names;
    @ConfigProperty(name = "fault-worker.wait", defaultValue = "1s")
    Duration wait;
    @ConfigProperty(name = "fault-worker.max-hold", defaultValue = "20ms")
    Duration maxHold;
    @ConfigProperty(name = "fault-worker.journal", defaultValue = "fault-journal.tsv")
    String journalPath;

    private final List<Thread> running = new ArrayList<>();
    private volatile boolean stopping;
    private final Object journalLock = new Object();
    private FileOutputStream journal;

    void start(@Observes StartupEvent event) {
        if (!enabled) {
            return;
        }
        try {
            journal = new FileOutputStream(journalPath, true);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot open the journal " + journalPath, e);
        }
        for (int t = 1; t <= threads; t++) {
            String thread = id + "-t" + t;
            Thread worker = new Thread(() -> work(thread), thread);
            running.add(worker);
            worker.start();
        }
        LOG.infof("Fault worker %s ready: %d threads on %s (%s engine)", id, threads, names, locks.mode());
    }

    void shutdown(@Observes ShutdownEvent event) {
        stopLoops();
    }

    /** Ends the loops, waits for the current critical sections, and reports what this instance still holds. */
    @POST
    @Path("/stop")
    @Produces(MediaType.APPLICATION_JSON)
    public Map<String, Object> stop() {
        boolean joined = stopLoops();
        int pinned = 0;
        if (((MySqlLockManager) locks).engine() instanceof NamedLockEngine named) {
            // Shared connections that hold nothing stay pinned a second for the next lock, then go back to the pool.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while ((pinned = named.pinnedConnections()) > 0 && System.nanoTime() < deadline) {
                try {
                    TimeUnit.MILLISECONDS.sleep(50);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        return Map.of("stopped", joined, "held", ((MySqlLockManager) locks).held().size(), "pinned", pinned);
    }

    private synchronized boolean stopLoops() {
        stopping = true;
        boolean joined = true;
        for (Thread thread : running) {
            try {
                thread.join(30_000);
                joined &= !thread.isAlive();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return joined;
    }

    private void work(String thread) {
        long sequence = 0;
        while (!stopping) {
            String name = names.get(ThreadLocalRandom.current().nextInt(names.size()));
            String section = thread + "-" + (++sequence);
            long requestedAt = now();
            try (LockHandle handle = locks.acquire(name, wait)) {
                long acquiredAt = now();
                handle.onLost(lost -> journal("L", section, now(), lost.reason()));
                criticalSection(handle, section, name, requestedAt, acquiredAt);
                handle.close();
                journal("R", section, now());
            } catch (LockNotAcquiredException e) {
                if (e.reason() != LockNotAcquiredException.Reason.BUSY) {
                    pauseAfterError();
                }
            } catch (RuntimeException e) {
                LOG.warnf("%s: %s", section, e);
                pauseAfterError();
            }
        }
    }

    private void criticalSection(LockHandle handle, String section, String name, long requestedAt, long acquiredAt) {
        long fence;
        try {
            fence = handle.fencingToken();
        } catch (LockLostException e) {
            journal("S", section, name, 0, acquiredAt, requestedAt);
            journal("E", section, "lost-before-write", now(), now());
            return;
        }
        journal("S", section, name, fence, acquiredAt, requestedAt);
        long hold = ThreadLocalRandom.current().nextLong(maxHold.toMillis() + 1);
        if (hold > 0) {
            try {
                Thread.sleep(hold);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        String outcome = handle.isValid() ? write(section, name, fence) : "skipped";
        long writeDone = now();
        journal("E", section, outcome, writeDone, now());
    }

    /** The fenced write: accepted only if no later holder's token reached the resource first. */
    private String write(String section, String name, long fence) {
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(false);
            try (PreparedStatement update = connection.prepareStatement(
                    "UPDATE resource SET value = value + 1, last_fence = ? WHERE name = ? AND last_fence < ?")) {
                update.setLong(1, fence);
                update.setString(2, name);
                update.setLong(3, fence);
                if (update.executeUpdate() == 0) {
                    connection.rollback();
                    return "rejected";
                }
            }
            try (PreparedStatement record = connection.prepareStatement(
                    "INSERT INTO resource_write (name, fence, section, written_at) VALUES (?, ?, ?, SYSDATE(6))")) {
                record.setString(1, name);
                record.setLong(2, fence);
                record.setString(3, section);
                record.executeUpdate();
            }
            connection.commit();
            return "accepted";
        } catch (SQLException e) {
            return "failed";
        }
    }

    private void pauseAfterError() {
        try {
            Thread.sleep(ThreadLocalRandom.current().nextLong(20, 100));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Wall-clock microseconds: the journals' time, comparable across the processes of one host. */
    static long now() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000;
    }

    /** One event, one write: what reached the kernel survives a SIGKILL of this process. */
    private void journal(Object... fields) {
        StringBuilder line = new StringBuilder();
        for (Object field : fields) {
            line.append(line.length() == 0 ? "" : "\t").append(field);
        }
        byte[] bytes = line.append('\n').toString().getBytes(StandardCharsets.UTF_8);
        synchronized (journalLock) {
            try {
                journal.write(bytes);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
