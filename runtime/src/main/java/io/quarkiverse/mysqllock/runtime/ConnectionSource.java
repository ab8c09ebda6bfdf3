package io.quarkiverse.mysqllock.runtime;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.StringJoiner;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import jakarta.transaction.Status;
import jakarta.transaction.SystemException;
import jakarta.transaction.TransactionManager;

import org.jboss.logging.Logger;

import io.agroal.api.AgroalDataSource;
import io.agroal.pool.wrapper.ConnectionWrapper;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockNotAcquiredException.Reason;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.ServerFlavor;

/**
 * Borrows lock connections from the Agroal pool and gives them back.
 * <p>
 * Borrowing happens on a thread of its own: that thread has no JTA transaction, so the connection is never enlisted in
 * the caller's, and the caller waits for the pool no longer than its budget even when the pool's
 * {@code acquisition-timeout} is longer. Statements then run on the driver's connection, beneath Agroal's wrapper,
 * which would otherwise refuse a connection borrowed outside a transaction being used inside one. Giving a connection
 * back happens off the caller's thread too when the caller is inside a transaction: Agroal ends the transaction's
 * association with its own connection whenever any connection is closed on a thread in that transaction, and the
 * transaction's next connection would then fail to enlist.
 */
public final class ConnectionSource implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(ConnectionSource.class);

    private final AgroalDataSource dataSource;
    private final String dataSourceName;
    private final Statements statements = new Statements();
    private final Duration connectionWait;
    private final Duration statementTimeout;
    private final ServerFlavor flavor;
    private final ExecutorService borrower;
    /** Null where the application has no JTA transactions. */
    private final TransactionManager transactions;
    private volatile ServerVersion server;
    private static final long READ_ONLY_FLUSH_NANOS = TimeUnit.SECONDS.toNanos(1);
    private volatile long readOnlyAt = System.nanoTime() - READ_ONLY_FLUSH_NANOS;
    private volatile Runnable onReadOnly;

    /**
     * @param statementTimeout {@code quarkus.mysql-lock.statement-timeout}
     * @param flavor {@code quarkus.mysql-lock.server-flavor}
     * @param transactions the JTA transaction manager, or null where there is none
     */
    public ConnectionSource(AgroalDataSource dataSource, String dataSourceName, Duration connectionWait,
            Duration statementTimeout, ServerFlavor flavor, TransactionManager transactions) {
        this.dataSource = dataSource;
        this.dataSourceName = dataSourceName;
        this.connectionWait = connectionWait;
        this.statementTimeout = statementTimeout;
        this.flavor = flavor;
        this.transactions = transactions;
        this.borrower = Executors.newCachedThreadPool(daemonThreads("mysql-lock-borrow-"));
    }

    /**
     * Threads that never keep the JVM alive, and inherit no thread-local state from whichever thread happens to start
     * them (a transaction or logging context of the caller's).
     */
    public static ThreadFactory daemonThreads(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(null, runnable, prefix + count.incrementAndGet(), 0, false);
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
    public Connection borrowWithin(String lockName, long budget) {
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
                    giveBack(borrowed.join()); // it arrived meanwhile
                }
                throw new LockNotAcquiredException(lockName, Duration.ofNanos(budget), Reason.DATABASE_ERROR, null,
                        "Interrupted while borrowing a connection for lock '" + lockName + "'", e);
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
                    giveBack(connection); // another request was first, or the borrow gave up
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
                        + "; NAMED locks keep their shared connections, and one per thread holding a lock it waited for, out of the"
                        + " pool): raise " + property
                        + ", hold fewer locks at once, or raise quarkus.mysql-lock.connection-wait. Or opening a new"
                        + " connection takes longer than that: check that the database is reachable and answers"
                        + " promptly (slow DNS resolution on the server is a common cause)",
                cause);
    }

    /**
     * A pooled connection for single autocommit statements, beneath the pool's wrapper: autocommit is switched on if
     * the pool hands connections out without it, and its statements may wait for row locks (up to the server's
     * {@code innodb_lock_wait_timeout}) and then for {@code statement-timeout} more; {@link #giveBack(Borrowed)} undoes
     * both.
     */
    public Borrowed borrowForStatements(String lockName, long remainingNanos) throws SQLException {
        Connection pooled = borrow(lockName, remainingNanos);
        try {
            Connection raw = raw(pooled);
            int networkTimeout = raw.getNetworkTimeout();
            boolean autoCommitWasOff = !raw.getAutoCommit();
            if (autoCommitWasOff) {
                raw.setAutoCommit(true);
            }
            Borrowed borrowed = new Borrowed(pooled, raw, autoCommitWasOff, networkTimeout);
            bound(raw, rowLockStatementMillis(server(raw)));
            return borrowed;
        } catch (SQLException | RuntimeException e) {
            discard(pooled);
            throw e;
        }
    }

    /**
     * A connection borrowed for statements: the pool's wrapper, the driver's connection beneath it, and what to restore
     * before it goes back.
     */
    public record Borrowed(Connection pooled, Connection raw, boolean autoCommitWasOff, int networkTimeout) {
    }

    /** Returns a connection borrowed for statements, as the pool lent it. */
    public void giveBack(Borrowed borrowed) {
        try {
            borrowed.raw().setNetworkTimeout(Runnable::run, borrowed.networkTimeout());
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
        if (inTransaction()) {
            try {
                borrower.execute(() -> close(pooled));
                return;
            } catch (RejectedExecutionException e) {
                // shut down: close it here
            }
        }
        close(pooled);
    }

    private void close(Connection pooled) {
        try {
            pooled.close();
        } catch (SQLException e) {
            LOG.debugf(e, "Returning a lock connection of datasource '%s' failed", dataSourceName);
        }
    }

    /** Whether the calling thread is inside a JTA transaction (or it cannot be told). */
    private boolean inTransaction() {
        if (transactions == null) {
            return false;
        }
        try {
            return transactions.getStatus() != Status.STATUS_NO_TRANSACTION;
        } catch (SystemException e) {
            return true;
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

    // --- time limits ---

    /** {@code statement-timeout}: the longest a statement may go without an answer beyond the waits it was asked for. */
    public long statementTimeoutMillis() {
        return statementTimeout.toMillis();
    }

    /** The time limit of a statement that may wait for row locks: the server's lock wait, then statement-timeout. */
    public long rowLockStatementMillis(ServerVersion server) {
        return TimeUnit.SECONDS.toMillis(server.lockWaitSeconds()) + statementTimeout.toMillis();
    }

    /**
     * Runs work with the session's row-lock wait ({@code innodb_lock_wait_timeout}) set to {@code seconds}, then sets it
     * back: for servers without a per-statement setting (MySQL), and for transactions.
     */
    public static <T> T withLockWait(Connection raw, long seconds, LockTable.SqlWork<T> work) throws SQLException {
        return withSessionSettings(raw, Map.of("innodb_lock_wait_timeout", seconds), work);
    }

    /** The prefix that makes a MariaDB statement wait for no row lock (error 1205 at once). */
    public static final String NO_ROW_WAIT = "SET STATEMENT innodb_lock_wait_timeout = 0 FOR ";

    /** Work whose statements start with a prefix. */
    @FunctionalInterface
    public interface PrefixedWork<T> {
        T run(String prefix) throws SQLException;
    }

    /**
     * Runs statements that must not wait for row locks (a renewal: a transaction holding a row must cost its own lease,
     * and a statement the client gave up on must not apply later, once the row is free). MariaDB: each statement gets
     * {@link #NO_ROW_WAIT}; MySQL has no per-statement setting: the session's wait is set to its 1 s minimum, then back.
     */
    public static <T> T withoutRowWaits(Connection raw, ServerVersion server, PrefixedWork<T> work) throws SQLException {
        if (server.setStatement()) {
            return work.run(NO_ROW_WAIT);
        }
        return withLockWait(raw, 1, () -> work.run(""));
    }

    /** Runs work with the session's variables set as given (numeric ones), then sets them back. */
    public static <T> T withSessionSettings(Connection raw, Map<String, Long> settings, LockTable.SqlWork<T> work)
            throws SQLException {
        List<String> names = List.copyOf(settings.keySet());
        List<Long> previous = new ArrayList<>(names.size());
        try (Statement statement = raw.createStatement();
                ResultSet rs = statement.executeQuery("SELECT " + names.stream().map(name -> "@@SESSION." + name)
                        .collect(Collectors.joining(", ")))) {
            rs.next();
            for (int i = 1; i <= names.size(); i++) {
                previous.add(rs.getLong(i));
            }
        }
        try (Statement statement = raw.createStatement()) {
            statement.execute(setSession(names, names.stream().map(settings::get).toList()));
            T result;
            try {
                result = work.run();
            } catch (SQLException | RuntimeException e) {
                // the work's failure is what the caller must see (a deadlock it retries), not the restore's
                try {
                    statement.execute(setSession(names, previous));
                } catch (SQLException restore) {
                    e.addSuppressed(restore);
                }
                throw e;
            }
            statement.execute(setSession(names, previous));
            return result;
        }
    }

    private static String setSession(List<String> names, List<Long> values) {
        StringJoiner assignments = new StringJoiner(", ", "SET SESSION ", "");
        for (int i = 0; i < names.size(); i++) {
            assignments.add(names.get(i) + " = " + values.get(i));
        }
        return assignments.toString();
    }

    /** Gives every statement on this driver connection at most {@code millis} to answer (the driver then closes it). */
    public static void bound(Connection raw, long millis) throws SQLException {
        raw.setNetworkTimeout(Runnable::run, (int) Math.min(Integer.MAX_VALUE, Math.max(1, millis)));
    }

    // --- the server ---

    /** The server behind the datasource, read once, on this connection if not known yet. */
    public ServerVersion server(Connection raw) throws SQLException {
        ServerVersion known = server;
        if (known != null) {
            return known;
        }
        try (Statement statement = raw.createStatement();
                ResultSet rs = statement.executeQuery("SELECT VERSION(), @@GLOBAL.innodb_lock_wait_timeout")) {
            rs.next();
            known = ServerVersion.parse(rs.getString(1), flavor, rs.getLong(2));
        }
        try (Statement statement = raw.createStatement();
                ResultSet rs = statement.executeQuery("SHOW GLOBAL VARIABLES LIKE 'wsrep_on'")) {
            known = known.onGalera(rs.next() && "ON".equalsIgnoreCase(rs.getString(2)));
        }
        LOG.debugf("Lock server of datasource '%s': %s (%s), row lock wait %d s", dataSourceName, known.describe(),
                known.text(), known.lockWaitSeconds());
        server = known;
        return known;
    }

    /** The server, if a connection has told already. */
    public Optional<ServerVersion> knownServer() {
        return Optional.ofNullable(server);
    }

    /**
     * A connection found the server read-only: it reached a replica, or a primary that a failover demoted while the pool
     * kept connections to it. Every pooled connection is replaced (idle ones now, lent ones when they come back), so that
     * new ones reach whatever server the datasource's address leads to now; then {@code onReadOnly} listeners re-check the
     * topology. At most once a second.
     */
    public void readOnlyFound(String where) {
        long now = System.nanoTime();
        long last = readOnlyAt;
        if (now - last < READ_ONLY_FLUSH_NANOS) {
            return;
        }
        readOnlyAt = now;
        LOG.warnf("The lock database of datasource '%s' refused a write as read-only (%s): a replica, or a primary"
                + " demoted by a failover. Replacing every pooled connection so that new ones reach the writable server",
                dataSourceName, where);
        try {
            dataSource.flush(AgroalDataSource.FlushMode.GRACEFUL);
        } catch (RuntimeException e) {
            LOG.debugf(e, "Flushing datasource '%s' failed", dataSourceName);
        }
        Runnable listener = onReadOnly;
        if (listener != null) {
            try {
                borrower.execute(listener);
            } catch (RejectedExecutionException e) {
                // shutting down
            }
        }
    }

    /** Called, off the caller's thread, after the pool was flushed because the server was found read-only. */
    public void onReadOnly(Runnable listener) {
        this.onReadOnly = listener;
    }

    /** Statements on a driver connection. */
    @FunctionalInterface
    public interface Work<T> {
        T run(Connection raw) throws SQLException;
    }

    /** How many dead pooled connections one operation replaces before it gives up. */
    public static final int MAX_STALE_CONNECTIONS = 8;

    /**
     * Runs read or administration statements on a pooled connection (no wait for the pool), each answered within
     * {@code statement-timeout}, replacing pooled connections that died idle (server restart, wait_timeout).
     *
     * @param what what is being done, for the error message
     * @throws IllegalStateException naming the datasource and the server's error when the work fails
     */
    public <T> T query(String lockName, String what, Work<T> work) {
        for (int attempt = 1;; attempt++) {
            Connection pooled = borrow(lockName, 0);
            try {
                Connection raw = raw(pooled);
                int networkTimeout = raw.getNetworkTimeout();
                bound(raw, statementTimeout.toMillis());
                boolean causal = server(raw).galera();
                if (causal) {
                    setSyncWait(raw, "1");
                }
                T result = work.run(raw);
                if (causal) {
                    setSyncWait(raw, "DEFAULT");
                }
                raw.setNetworkTimeout(Runnable::run, networkTimeout);
                giveBack(pooled);
                return result;
            } catch (SQLException e) {
                discard(pooled);
                if (SqlErrors.isReadOnly(e)) {
                    readOnlyFound(what);
                }
                if (!(SqlErrors.isConnectionFailure(e) || SqlErrors.isReadOnly(e)) || attempt >= MAX_STALE_CONNECTIONS) {
                    throw new IllegalStateException("Could not " + what + " from datasource '" + dataSourceName + "': "
                            + SqlErrors.describe(e), e);
                }
            } catch (RuntimeException e) {
                discard(pooled); // in an unknown state: never back to the pool
                throw e;
            }
        }
    }

    /**
     * On a Galera node, makes the session's reads wait until the node applied every commit the cluster acknowledged
     * before them ({@code wsrep_sync_wait = 1}): without it, a read there missed a take or a release made on another
     * node a moment before (47 of 600 reads in {@code GaleraClusterTest}). The engines' writes need no such wait: a
     * write made on a stale view conflicts at certification with the commit it did not see, and is rolled back.
     */
    private static void setSyncWait(Connection raw, String value) throws SQLException {
        try (Statement statement = raw.createStatement()) {
            statement.execute("SET SESSION wsrep_sync_wait = " + value);
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
}
