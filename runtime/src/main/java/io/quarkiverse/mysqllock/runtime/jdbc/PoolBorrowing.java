package io.quarkiverse.mysqllock.runtime.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockNotAcquiredException.Reason;

/**
 * Borrowing from the Agroal pool within a budget, on borrower threads (which have no JTA transaction), making a new
 * request every {@link #BORROW_SLICE_NANOS} so that a connection Agroal failed to hand over is still found, and
 * explaining a borrow that failed: an exhausted pool names the property to raise.
 */
final class PoolBorrowing {

    private final AgroalDataSource dataSource;
    private final String dataSourceName;
    private final ExecutorService borrower;
    /** Gives a connection the borrow does not keep back to the pool. */
    private final Consumer<Connection> giveBack;

    PoolBorrowing(AgroalDataSource dataSource, String dataSourceName, ExecutorService borrower,
            Consumer<Connection> giveBack) {
        this.dataSource = dataSource;
        this.dataSourceName = dataSourceName;
        this.borrower = borrower;
        this.giveBack = giveBack;
    }

    /**
     * How long a borrow waits for its request to the pool before it makes another. Agroal hands a returned connection
     * only to a thread already blocked in the pool: one returned while a request is between its scan of the pool and
     * its wait is missed, and that request sleeps out the pool's whole {@code acquisition-timeout} with a connection
     * free (seen in CI: an acquisition failed after 5 s while the pool had a connection to give). A new request scans
     * the pool, so a missed connection is found within a slice. Longer than the second for which Agroal makes a new
     * request first wait for a hand-over when others already wait.
     */
    static final long BORROW_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(1_250);

    /**
     * A pooled connection, given exactly {@code budget} nanoseconds to arrive. The first connection any of its requests
     * gets is the borrow's; every other, and any that arrives after the borrow gave up, goes straight back to the pool.
     */
    Connection borrowWithin(String lockName, long budget) {
        long start = System.nanoTime();
        long deadline = start + budget;
        CompletableFuture<Connection> borrowed = new CompletableFuture<>();
        while (true) {
            requestFromPool(borrowed);
            try {
                long slice = Math.min(deadline - System.nanoTime(), BORROW_SLICE_NANOS);
                return borrowed.get(Math.max(0, slice), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                if (deadline - System.nanoTime() > 0) {
                    continue;
                }
                if (borrowed.completeExceptionally(e)) {
                    throw poolExhausted(lockName, Duration.ofNanos(budget), e);
                }
                // an outcome arrived meanwhile: it is the borrow's
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                if (!borrowed.completeExceptionally(e) && !borrowed.isCompletedExceptionally()) {
                    giveBack.accept(borrowed.join()); // it arrived meanwhile
                }
                throw new LockNotAcquiredException(lockName, Duration.ofNanos(System.nanoTime() - start),
                        Reason.INTERRUPTED, null, "Interrupted while borrowing a connection for lock '" + lockName + "'",
                        e);
            } catch (ExecutionException e) {
                throw borrowFailed(lockName, budget, start, e.getCause());
            }
            try {
                return borrowed.join();
            } catch (CompletionException e) {
                throw borrowFailed(lockName, budget, start, e.getCause());
            }
        }
    }

    /** One more request to the pool for {@code borrowed}, on a borrower thread. */
    private void requestFromPool(CompletableFuture<Connection> borrowed) {
        try {
            borrower.execute(() -> {
                Connection connection;
                try {
                    connection = dataSource.getConnection();
                } catch (SQLException | RuntimeException e) {
                    borrowed.completeExceptionally(e);
                    return;
                }
                if (!borrowed.complete(connection)) {
                    giveBack.accept(connection); // another request was first, or the borrow gave up
                }
            });
        } catch (RejectedExecutionException e) {
            borrowed.completeExceptionally(new SQLException("The lock manager is shut down", e));
        }
    }

    private LockNotAcquiredException borrowFailed(String lockName, long budget, long start, Throwable cause) {
        String message = String.valueOf(cause.getMessage()).toLowerCase(Locale.ROOT);
        if (message.contains("acquisition timeout")) {
            // The pool gave up first (its acquisition-timeout): say how long it was, not our budget.
            return poolExhausted(lockName, Duration.ofNanos(System.nanoTime() - start), cause);
        }
        return new LockNotAcquiredException(lockName, Duration.ofNanos(budget), Reason.DATABASE_ERROR, null,
                "Could not get a connection of datasource '" + dataSourceName + "' for lock '" + lockName + "': "
                        + (cause instanceof SQLException sql ? SqlErrors.describe(sql) : cause),
                cause);
    }

    private LockNotAcquiredException poolExhausted(String lockName, Duration waited, Throwable cause) {
        int maxSize = dataSource.getConfiguration().connectionPoolConfiguration().maxSize();
        String property = DataSourceNames.property(dataSourceName, "jdbc.max-size");
        return new LockNotAcquiredException(lockName, waited, Reason.POOL_EXHAUSTED, null,
                "No connection of datasource '" + dataSourceName + "' could be had within " + waited.toMillis()
                        + " ms to acquire lock '" + lockName + "'. Either the pool is exhausted (max-size " + maxSize
                        + "; the lock engine keeps one for its housekeeping, and NAMED locks keep their shared connections and one"
                        + " per thread holding a lock it waited for out of the pool): raise " + property
                        + ", hold fewer locks at once, or raise quarkus.mysql-lock.connection-wait. Or opening a new"
                        + " connection takes longer than that: check that the database is reachable and answers"
                        + " promptly (slow DNS resolution on the server is a common cause)",
                cause);
    }
}
