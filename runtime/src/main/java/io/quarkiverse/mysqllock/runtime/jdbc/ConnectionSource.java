package io.quarkiverse.mysqllock.runtime.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.transaction.Status;
import jakarta.transaction.SystemException;
import jakarta.transaction.TransactionManager;

import org.jboss.logging.Logger;

import io.agroal.api.AgroalDataSource;
import io.agroal.pool.wrapper.ConnectionWrapper;

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
    private final ServerVersion.Flavor flavor;
    private final ExecutorService borrower;
    private final PoolBorrowing pool;
    /** Null where the application has no JTA transactions. */
    private final TransactionManager transactions;
    private volatile ServerVersion server;
    private static final long READ_ONLY_FLUSH_NANOS = TimeUnit.SECONDS.toNanos(1);
    private volatile long readOnlyAt = System.nanoTime() - READ_ONLY_FLUSH_NANOS;
    private volatile Runnable onReadOnly;
    private final List<Runnable> readOnlyListeners = new CopyOnWriteArrayList<>();
    /**
     * The connection kept for the engines' own periodic statements (the membership of the fleet, lease renewals), so
     * that an application holding every other connection of the pool costs no held lock.
     */
    private final KeptConnection housekeeping = new KeptConnection(this, "(housekeeping)");
    /** How long housekeeping waits for the kept connection before it borrows one: statements on it take milliseconds. */
    private static final long HOUSEKEEPING_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** Ends a statement's wait on the server when its thread is interrupted ({@code KILL QUERY}, from a pooled connection). */
    private final WaitInterrupts waitInterrupts = new WaitInterrupts(this);

    /**
     * @param statementTimeout {@code quarkus.mysql-lock.statement-timeout}
     * @param flavor {@code quarkus.mysql-lock.server-flavor}
     * @param transactions the JTA transaction manager, or null where there is none
     */
    public ConnectionSource(AgroalDataSource dataSource, String dataSourceName, Duration connectionWait,
            Duration statementTimeout, ServerVersion.Flavor flavor, TransactionManager transactions) {
        this.dataSource = dataSource;
        this.dataSourceName = dataSourceName;
        this.connectionWait = connectionWait;
        this.statementTimeout = statementTimeout;
        this.flavor = flavor;
        this.transactions = transactions;
        this.borrower = Executors.newCachedThreadPool(daemonThreads("mysql-lock-borrow-"));
        this.pool = new PoolBorrowing(dataSource, dataSourceName, borrower, this::giveBack);
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
     * A pooled connection, given exactly {@code budget} nanoseconds to arrive. The first connection any of its requests
     * gets is the borrow's; every other, and any that arrives after the borrow gave up, goes straight back to the pool.
     */
    public Connection borrowWithin(String lockName, long budget) {
        return pool.borrowWithin(lockName, budget);
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
            Statements.bound(raw, rowLockStatementMillis(server(raw)));
            return borrowed;
        } catch (SQLException | RuntimeException e) {
            discard(pooled);
            throw e;
        }
    }

    /**
     * Runs statements on a connection {@linkplain #borrowForStatements borrowed for them} (no wait for the pool), and
     * gives it back. A statement the server refused for a row lock (a lock wait time-out, a deadlock: nothing changed,
     * the session is fine) gives the connection back too; any other failure discards it. The failure is rethrown.
     */
    public <T> T withStatements(String lockName, Work<T> work) throws SQLException {
        Borrowed borrowed = borrowForStatements(lockName, 0);
        try {
            T result = work.run(borrowed.raw());
            giveBack(borrowed);
            return result;
        } catch (SQLException e) {
            if (SqlErrors.isLockWaitTimeout(e) || SqlErrors.isDeadlock(e)) {
                giveBack(borrowed);
            } else {
                discard(borrowed.pooled());
            }
            throw e;
        } catch (RuntimeException | Error e) {
            discard(borrowed.pooled());
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
        } catch (SQLException | RuntimeException e) {
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

    /**
     * The time limit of statements that wait for no row lock ({@link Statements#withoutRowWaits}): statement-timeout,
     * and on a server without a per-statement wait (MySQL) the 1 s minimum of the session's wait.
     */
    public long noRowWaitStatementMillis(ServerVersion server) {
        return statementTimeout.toMillis() + (server.setStatement() ? 0 : 1000);
    }

    /**
     * Runs an engine's own periodic statements (the fleet's membership, lease renewals) on the connection kept for
     * them; on one borrowed for this run alone while another run holds it for more than a moment (a stalled statement).
     * A kept connection found dead (a server restart, the pool closing its connections at shutdown) is destroyed, and
     * the next run borrows another: the caller tries again if its work may run twice.
     *
     * @param boundMillis the time limit of each statement
     */
    public <T> T housekeeping(long boundMillis, Work<T> work) throws SQLException {
        return housekeeping.run(HOUSEKEEPING_WAIT_NANOS, boundMillis, work);
    }

    /**
     * Keeps a connection borrowed for statements as the housekeeping connection (the engine's choice hands its own
     * over, so that one is kept before the pool can be exhausted), or gives it back if one is kept already.
     */
    public void keepForHousekeeping(Borrowed borrowed) {
        housekeeping.adopt(borrowed);
    }

    /** The time limit of a statement that may wait for row locks: the server's lock wait, then statement-timeout. */
    public long rowLockStatementMillis(ServerVersion server) {
        return TimeUnit.SECONDS.toMillis(server.lockWaitSeconds()) + statementTimeout.toMillis();
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
        for (Runnable listener : readOnlyListeners) {
            listener.run();
        }
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

    /**
     * Called on the finding thread whenever a connection finds the server read-only, before anything else: it must not
     * block.
     */
    public void whenReadOnly(Runnable listener) {
        readOnlyListeners.add(listener);
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
                Statements.bound(raw, statementTimeout.toMillis());
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

    /** Ends statements' waits on the server when their threads are interrupted. */
    public WaitInterrupts waitInterrupts() {
        return waitInterrupts;
    }

    @Override
    public void close() {
        waitInterrupts.close();
        housekeeping.close();
        borrower.shutdownNow();
    }
}
