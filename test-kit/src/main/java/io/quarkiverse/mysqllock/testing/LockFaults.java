package io.quarkiverse.mysqllock.testing;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.engine.LockEngine;
import io.quarkiverse.mysqllock.runtime.engine.PeriodicWork;
import io.quarkiverse.mysqllock.runtime.lease.LeaseEngine;
import io.quarkiverse.mysqllock.runtime.memory.InMemoryEngine;
import io.quarkiverse.mysqllock.runtime.named.NamedLockEngine;
import io.quarkus.agroal.runtime.AgroalDataSourceUtil;

/**
 * Faults for an application's own tests, made as the real failures are made, so that the code that handles them
 * ({@code onLost} listeners, {@code LockLostException}, {@code @Retry}/{@code @Fallback}, fencing) runs as it would in
 * production. Inject it in a {@code @QuarkusTest} ({@code @Inject LockFaults faults}); it acts on the default
 * datasource's {@link LockManager}, {@link #on(LockManager)} on another's. Available in tests only: the extension
 * registers the bean only when the application runs for tests.
 */
@Singleton
public class LockFaults {

    /** How long a fault waits for this instance's holders to be told of a loss it caused. */
    private static final Duration TOLD_WITHIN = Duration.ofSeconds(30);

    private final MySqlLockManager locks;

    @Inject
    public LockFaults(LockManager locks) {
        this.locks = manager(locks);
    }

    /** The faults of another datasource's lock manager. */
    public LockFaults on(LockManager other) {
        return new LockFaults(other);
    }

    /**
     * Loses the lock of this name as the real failure would: on NAMED the server ends the holder's session (as a
     * {@code KILL}, a restart or a network cut does: every lock of that session is lost), on LEASE the lease ends on
     * the server (as when another instance took it over, its holder's renewals having failed for a whole ttl, and gave
     * it up: the holder is told {@code NOT_HELD}); with the in-memory engine the hold ends as a lease that ran out. Returns
     * once this instance's holder was told
     * (its {@code isValid()} false, its {@code onLost} listeners called or being called on
     * their own threads); a holder in another process learns of it at its next keepalive or renewal.
     *
     * @throws IllegalStateException if no one holds the lock on the server
     */
    public void loseLock(String name) {
        String serverName = locks.serverName(name);
        LockEngine engine = locks.engine();
        // this instance's hold, told apart from a later one of the same name (a waiting thread takes the name as soon
        // as it is lost) by when it began
        Optional<Instant> heldHereSince = heldHere(name).map(LockInfo::since);
        if (engine instanceof InMemoryEngine memory) {
            // quarkus.mysql-lock.in-memory: the hold ends as a lease that ran out
            if (!memory.loseHolder(serverName, "Lock '" + name + "' was lost (LockFaults.loseLock)")) {
                throw new IllegalStateException("Lock '" + name + "' is not held: nothing to lose");
            }
        } else {
            // on a thread of its own: outside the test's transaction, if it has one (an uncommitted change would hold
            // the row and end nothing)
            String table = engine instanceof LeaseEngine lease ? lease.tableName() : null;
            CompletableFuture<Void> done = new CompletableFuture<>();
            Thread fault = new Thread(() -> {
                try (Connection connection = dataSource().getConnection()) {
                    if (table != null) {
                        endLease(connection, table, name, serverName);
                    } else {
                        killHolderSession(connection, name, serverName);
                    }
                    done.complete(null);
                } catch (SQLException e) {
                    done.completeExceptionally(new IllegalStateException("Could not lose lock '" + name + "': "
                            + e.getMessage(), e));
                } catch (RuntimeException e) {
                    done.completeExceptionally(e);
                }
            }, "lock-faults-lose-" + name);
            fault.start();
            await(done, fault, 60, "lose lock '" + name + "'");
            PeriodicWork work = engine.periodicWork();
            if (work != null) {
                // the keepalive check or the renewal now, rather than at the next period: the holder is told now
                try {
                    work.runNow();
                } catch (RuntimeException e) {
                    // a failed check or renewal is what the loss looks like to some of the engine's work
                }
            }
        }
        heldHereSince.ifPresent(since -> awaitTold(name, since));
    }

    /**
     * Grants the lock of this name to another holder meanwhile, unbeknownst to this instance's holder, which goes on as
     * if it held the lock: its fencing token is now stale, as after a pause past its lease. A fenced commit of its
     * transaction rolls back with {@code LockLostException} ({@code quarkus.mysql-lock.fenced-commit=true}, or
     * {@link LockManager#fence}), and a resource that checks tokens refuses its writes. On LEASE the lease is taken over
     * and given up on the server (the holder is told at its next renewal); on NAMED the server ends the holder's session
     * and the name's fence goes up as a later holder's grant raises it (the holder is told at its next keepalive); with
     * the in-memory engine the name's fence goes up (the holder is told when it releases).
     *
     * @throws IllegalStateException if no one holds the lock
     */
    public void grantElsewhere(String name) {
        String serverName = locks.serverName(name);
        LockEngine engine = locks.engine();
        if (engine instanceof InMemoryEngine memory) {
            if (!memory.grantElsewhere(serverName)) {
                throw new IllegalStateException("Lock '" + name + "' is not held: no other holder can be granted it");
            }
            return;
        }
        String table = engine instanceof LeaseEngine lease ? lease.tableName() : ((NamedLockEngine) engine).tableName();
        CompletableFuture<Void> done = new CompletableFuture<>();
        Thread fault = new Thread(() -> {
            try (Connection connection = dataSource().getConnection()) {
                if (engine instanceof LeaseEngine) {
                    takeOverLease(connection, table, name, serverName);
                } else {
                    killHolderSession(connection, name, serverName);
                    raiseFence(connection, table, serverName);
                }
                done.complete(null);
            } catch (SQLException e) {
                done.completeExceptionally(new IllegalStateException("Could not grant lock '" + name + "' elsewhere: "
                        + e.getMessage(), e));
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
            }
        }, "lock-faults-grant-" + name);
        fault.start();
        await(done, fault, 60, "grant lock '" + name + "' elsewhere");
    }

    private static void takeOverLease(Connection connection, String table, String name, String serverName)
            throws SQLException {
        // as another instance that took the lease over (a take raises the fence) and gave it up
        try (PreparedStatement statement = connection.prepareStatement("UPDATE " + table + " SET owner = NULL,"
                + " expires_at = '1970-01-01 00:00:00', fence = fence + 1 WHERE name = ? AND owner IS NOT NULL")) {
            statement.setString(1, serverName);
            if (statement.executeUpdate() == 0) {
                throw new IllegalStateException("Lock '" + name + "' has no lease: no other holder can be granted it");
            }
        }
    }

    private static void raiseFence(Connection connection, String table, String serverName) throws SQLException {
        // as the token a later holder's grant is issued with fenced commits
        try (PreparedStatement statement = connection.prepareStatement("UPDATE " + table
                + " SET fence = fence + 1 WHERE name = ?")) {
            statement.setString(1, serverName);
            statement.executeUpdate();
        }
    }

    /**
     * The answer of the kit's own thread doing {@code what} (its failure as it is, when unchecked), within
     * {@code seconds}; the thread is interrupted if the answer does not come.
     */
    private static <T> T await(CompletableFuture<T> answer, Thread worker, long seconds, String what) {
        try {
            return answer.get(seconds, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            throw e.getCause() instanceof RuntimeException runtime ? runtime
                    : new IllegalStateException("Could not " + what, e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            worker.interrupt();
            throw new IllegalStateException("Could not " + what + " within " + seconds + " s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            worker.interrupt();
            throw new IllegalStateException("Interrupted while trying to " + what, e);
        }
    }

    private static void killHolderSession(Connection connection, String name, String serverName) throws SQLException {
        Long session;
        try (PreparedStatement statement = connection.prepareStatement("SELECT IS_USED_LOCK(?)")) {
            statement.setString(1, serverName);
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                long id = rs.getLong(1);
                session = rs.wasNull() ? null : id;
            }
        }
        if (session == null) {
            throw new IllegalStateException("Lock '" + name + "' is not held on the server: nothing to lose");
        }
        try (Statement statement = connection.createStatement()) {
            statement.execute("KILL CONNECTION " + session);
        }
    }

    private static void endLease(Connection connection, String table, String name, String serverName)
            throws SQLException {
        // as another instance that took the lease over (its holder's renewals could not reach the server) and gave it
        // up: the holder finds it gone at its next renewal
        try (PreparedStatement statement = connection.prepareStatement("UPDATE " + table
                + " SET owner = NULL, expires_at = '1970-01-01 00:00:00' WHERE name = ? AND owner IS NOT NULL")) {
            statement.setString(1, serverName);
            if (statement.executeUpdate() == 0) {
                throw new IllegalStateException("Lock '" + name + "' has no lease: nothing to lose");
            }
        }
    }

    private Optional<LockInfo> heldHere(String name) {
        return locks.held().stream().filter(info -> info.name().equals(name)).findFirst();
    }

    private void awaitTold(String name, Instant since) {
        long deadline = System.nanoTime() + TOLD_WITHIN.toNanos();
        while (heldHere(name).filter(info -> info.since().equals(since)).isPresent()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("Lock '" + name + "' was lost on the server, but its holder in this"
                        + " instance was not told within " + TOLD_WITHIN.toSeconds() + " s");
            }
            try {
                TimeUnit.MILLISECONDS.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("Interrupted while waiting for the loss of '" + name + "' to be told", e);
            }
        }
    }

    /**
     * Stops the engine's renewals, keepalive checks and membership renewals until the returned pause is closed, as
     * when the database does not answer them: on LEASE every lease is lost once its ttl runs out (the holder sees it by
     * its own clock); on NAMED the server keeps the locks of live sessions, but a leadership term ends once its session
     * went unconfirmed for two keepalive intervals. Use it to test what your code does when renewals fail.
     */
    public Pause pauseRenewals() {
        PeriodicWork work = locks.engine().periodicWork();
        if (work == null) {
            throw new IllegalStateException((locks.engine() instanceof InMemoryEngine ? "The in-memory engine"
                    : "The " + locks.mode() + " engine") + " has no renewals to pause");
        }
        work.pause(true);
        return () -> work.pause(false);
    }

    /**
     * Makes the lock of this name busy until the returned hold is closed: another holder (a thread of the test kit's)
     * takes it, so the application's acquisitions answer as they do when another replica holds it (a
     * {@code LockNotAcquiredException} with reason {@code BUSY}, an empty {@code tryAcquire}, a skipped
     * {@code @Locked} method, a {@code @Retry} that retries).
     *
     * @throws IllegalStateException if the lock is held already
     */
    public Busy makeBusy(String name) {
        CompletableFuture<LockHandle> taken = new CompletableFuture<>();
        CountDownLatch done = new CountDownLatch(1);
        Thread holder = new Thread(() -> {
            Optional<LockHandle> handle;
            try {
                handle = locks.tryAcquire(name);
            } catch (RuntimeException e) {
                taken.completeExceptionally(e);
                return;
            }
            if (handle.isEmpty()) {
                taken.completeExceptionally(new IllegalStateException("Lock '" + name
                        + "' is held already: it cannot be made busy"));
                return;
            }
            taken.complete(handle.get());
            try {
                done.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                handle.get().release();
            }
        }, "lock-faults-busy-" + name);
        holder.setDaemon(true);
        holder.start();
        return new Busy(await(taken, holder, 30, "make '" + name + "' busy"), done, holder);
    }

    /** The engine this manager uses. */
    public LockMode engine() {
        return locks.mode();
    }

    private AgroalDataSource dataSource() {
        return AgroalDataSourceUtil.dataSourceIfActive(locks.dataSourceName()).orElseThrow(
                () -> new IllegalStateException("The datasource '" + locks.dataSourceName() + "' is not active"));
    }

    static MySqlLockManager manager(LockManager locks) {
        if (locks instanceof MySqlLockManager manager) {
            return manager;
        }
        throw new IllegalArgumentException("LockFaults needs the extension's LockManager (got "
                + (locks == null ? "null" : locks.getClass().getName()) + ")");
    }

    /** A pause of the renewals: closing it resumes them. */
    @FunctionalInterface
    public interface Pause extends AutoCloseable {
        @Override
        void close();
    }

    /** A lock made busy by {@link #makeBusy}: closing it releases the lock. */
    public static final class Busy implements AutoCloseable {

        private final LockHandle handle;
        private final CountDownLatch done;
        private final Thread holder;

        private Busy(LockHandle handle, CountDownLatch done, Thread holder) {
            this.handle = handle;
            this.done = done;
            this.holder = holder;
        }

        /** The fencing token of the busy hold: the application's next hold of the name gets a greater one. */
        public long fencingToken() {
            return handle.fencingToken();
        }

        /** Releases the lock; returns once it is released. */
        @Override
        public void close() {
            done.countDown();
            try {
                holder.join(TimeUnit.SECONDS.toMillis(30));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
