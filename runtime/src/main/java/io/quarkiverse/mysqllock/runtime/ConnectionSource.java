package io.quarkiverse.mysqllock.runtime;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import org.jboss.logging.Logger;

import io.agroal.api.AgroalDataSource;
import io.agroal.pool.wrapper.ConnectionWrapper;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockNotAcquiredException.Reason;

/**
 * Borrows lock connections from the Agroal pool and gives them back.
 * <p>
 * Borrowing happens on a thread of its own: that thread has no JTA transaction, so the connection is never enlisted in
 * the caller's, and the caller waits for the pool no longer than its budget even when the pool's
 * {@code acquisition-timeout} is longer. Statements then run on the driver's connection, beneath Agroal's wrapper,
 * which would otherwise refuse a connection borrowed outside a transaction being used inside one.
 */
public final class ConnectionSource implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(ConnectionSource.class);

    private final AgroalDataSource dataSource;
    private final String dataSourceName;
    private final Statements statements = new Statements();
    private final Duration connectionWait;
    private final ExecutorService borrower;

    public ConnectionSource(AgroalDataSource dataSource, String dataSourceName, Duration connectionWait) {
        this.dataSource = dataSource;
        this.dataSourceName = dataSourceName;
        this.connectionWait = connectionWait;
        this.borrower = Executors.newCachedThreadPool(daemonThreads("mysql-lock-borrow-"));
    }

    /** Threads that never keep the JVM alive. */
    public static ThreadFactory daemonThreads(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    public String dataSourceName() {
        return dataSourceName;
    }

    /** How long an acquisition with {@code remainingNanos} left may wait for a connection: at least connection-wait. */
    public long budgetNanos(long remainingNanos) {
        return Math.max(remainingNanos, connectionWait.toNanos());
    }

    /** The engines' hot statements, prepared once per physical connection. */
    public Statements statements() {
        return statements;
    }

    /** A pooled connection, given {@code max(remaining, connection-wait)} to arrive. */
    public Connection borrow(String lockName, long remainingNanos) {
        return borrowWithin(lockName, budgetNanos(remainingNanos));
    }

    /** A pooled connection, given exactly {@code budget} nanoseconds to arrive. */
    public Connection borrowWithin(String lockName, long budget) {
        long start = System.nanoTime();
        CompletableFuture<Connection> borrowed = CompletableFuture.supplyAsync(this::getConnection, borrower);
        try {
            return borrowed.get(budget, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            // The pool may still hand the connection over later: give it straight back then.
            borrowed.whenComplete((connection, failure) -> {
                if (connection != null) {
                    giveBack(connection);
                }
            });
            throw poolExhausted(lockName, Duration.ofNanos(budget), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            borrowed.whenComplete((connection, failure) -> {
                if (connection != null) {
                    giveBack(connection);
                }
            });
            throw new LockNotAcquiredException(lockName, Duration.ofNanos(budget), Reason.DATABASE_ERROR, null,
                    "Interrupted while borrowing a connection for lock '" + lockName + "'", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() instanceof WrappedSqlException w ? w.getCause() : e.getCause();
            String message = String.valueOf(cause.getMessage()).toLowerCase(Locale.ROOT);
            if (message.contains("acquisition timeout")) {
                // The pool gave up first (its acquisition-timeout): say how long it was, not our budget.
                throw poolExhausted(lockName, Duration.ofNanos(System.nanoTime() - start), cause);
            }
            throw new LockNotAcquiredException(lockName, Duration.ofNanos(budget), Reason.DATABASE_ERROR, null,
                    "Could not get a connection of datasource '" + dataSourceName + "' for lock '" + lockName + "': "
                            + (cause instanceof SQLException sql ? SqlErrors.describe(sql) : cause),
                    cause);
        }
    }

    private Connection getConnection() {
        try {
            return dataSource.getConnection();
        } catch (SQLException e) {
            throw new WrappedSqlException(e);
        }
    }

    private LockNotAcquiredException poolExhausted(String lockName, Duration waited, Throwable cause) {
        int maxSize = dataSource.getConfiguration().connectionPoolConfiguration().maxSize();
        String property = DataSourceNames.property(dataSourceName, "jdbc.max-size");
        return new LockNotAcquiredException(lockName, waited, Reason.POOL_EXHAUSTED, null,
                "No connection of datasource '" + dataSourceName + "' could be had within " + waited.toMillis()
                        + " ms to acquire lock '" + lockName + "'. Either the pool is exhausted (max-size " + maxSize
                        + "; NAMED locks keep their shared connections, and one per thread holding a lock it waited for, out of the"
                        + " pool): raise " + property
                        + ", hold fewer locks at once, or raise quarkus.mysql-lock.connection-wait. Or opening a new"
                        + " connection takes longer than that: check that the database is reachable and answers"
                        + " promptly (slow DNS resolution on the server is a common cause)",
                cause);
    }

    /**
     * A pooled connection for single autocommit statements, beneath the pool's wrapper: autocommit is switched on if
     * the pool hands connections out without it, and switched back by {@link #giveBack(Borrowed)}.
     */
    public Borrowed borrowForStatements(String lockName, long remainingNanos) throws SQLException {
        Connection pooled = borrow(lockName, remainingNanos);
        try {
            Connection raw = raw(pooled);
            boolean autoCommitWasOff = !raw.getAutoCommit();
            if (autoCommitWasOff) {
                raw.setAutoCommit(true);
            }
            return new Borrowed(pooled, raw, autoCommitWasOff);
        } catch (SQLException | RuntimeException e) {
            discard(pooled);
            throw e;
        }
    }

    /** A connection borrowed for statements: the pool's wrapper and the driver's connection beneath it. */
    public record Borrowed(Connection pooled, Connection raw, boolean autoCommitWasOff) {
    }

    /** Returns a connection borrowed for statements, as the pool lent it. */
    public void giveBack(Borrowed borrowed) {
        try {
            if (borrowed.autoCommitWasOff()) {
                borrowed.raw().setAutoCommit(false);
            }
        } catch (SQLException e) {
            discard(borrowed.pooled());
            return;
        }
        giveBack(borrowed.pooled());
    }

    /** The driver's connection beneath the pool's wrapper. */
    public static Connection raw(Connection pooled) throws SQLException {
        return pooled.unwrap(Connection.class);
    }

    /** Returns a connection that holds no named lock to the pool. */
    public void giveBack(Connection pooled) {
        try {
            pooled.close();
        } catch (SQLException e) {
            LOG.debugf(e, "Returning a lock connection of datasource '%s' failed", dataSourceName);
        }
    }

    /**
     * Destroys a connection that may still hold named locks: its server session ends now, so the server frees every lock
     * of it, and the pool replaces it instead of lending it out again.
     */
    public void discard(Connection pooled) {
        try {
            Connection raw = raw(pooled);
            statements.forget(raw);
            raw.abort(Runnable::run);
        } catch (SQLException | RuntimeException e) {
            LOG.debugf(e, "Aborting a lock connection of datasource '%s' failed", dataSourceName);
        }
        if (pooled instanceof ConnectionWrapper wrapper) {
            wrapper.getHandler().setFlushOnly();
            giveBack(pooled);
        } else {
            giveBack(pooled);
            dataSource.flush(AgroalDataSource.FlushMode.INVALID);
        }
    }

    /** Statements on a driver connection. */
    @FunctionalInterface
    public interface Work<T> {
        T run(Connection raw) throws SQLException;
    }

    /** How many dead pooled connections one operation replaces before it gives up. */
    public static final int MAX_STALE_CONNECTIONS = 8;

    /**
     * Runs read or administration statements on a pooled connection (no wait for the pool), replacing pooled
     * connections that died idle (server restart, wait_timeout).
     *
     * @param what what is being done, for the error message
     * @throws IllegalStateException naming the datasource and the server's error when the work fails
     */
    public <T> T query(String lockName, String what, Work<T> work) {
        for (int attempt = 1;; attempt++) {
            Connection pooled = borrow(lockName, 0);
            try {
                T result = work.run(raw(pooled));
                giveBack(pooled);
                return result;
            } catch (SQLException e) {
                discard(pooled);
                if (!SqlErrors.isConnectionFailure(e) || attempt >= MAX_STALE_CONNECTIONS) {
                    throw new IllegalStateException("Could not " + what + " from datasource '" + dataSourceName + "': "
                            + SqlErrors.describe(e), e);
                }
            }
        }
    }

    /** Runs blocking work off the caller's thread. */
    public ExecutorService executor() {
        return borrower;
    }

    @Override
    public void close() {
        borrower.shutdownNow();
    }

    private static final class WrappedSqlException extends RuntimeException {
        WrappedSqlException(SQLException cause) {
            super(cause);
        }
    }
}
