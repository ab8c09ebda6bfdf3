package io.quarkiverse.mysqllock.runtime.named;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.ServerVersion;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;
import io.quarkiverse.mysqllock.runtime.jdbc.Statements;
import io.quarkiverse.mysqllock.runtime.jdbc.WaitInterrupts;

/**
 * The NAMED engine's statements, stateless. The instance methods run on a pinned session, and their caller holds the
 * session's mutex; the static {@link #holderOf} and {@link #isUsedLocks} run on any connection (a pooled one for the
 * census and the fences, a pinned one under its mutex for the keepalive). Every statement on a pinned session is
 * answered within {@code statement-timeout}, beyond the wait it asks the server for: the session's network time-out is
 * that limit, and is raised for the length of a {@code GET_LOCK} wait only. A {@code GET_LOCK} that waits on the server
 * ends within about 100 ms of an interrupt of its thread ({@link WaitInterrupts}: {@code KILL QUERY} of its session,
 * which lives on with every lock it holds).
 */
final class SessionStatements {

    private static final Logger LOG = Logger.getLogger(NamedLockEngine.class);

    /** How often a server without fractional waits (MySQL) is polled for the sub-second rest of a wait. */
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    /** How many names one {@link #isUsedLocks} statement asks about at most. */
    static final int NAMES_PER_CHECK = 200;
    private static final String GET_LOCK = "SELECT GET_LOCK(?, ?), CONNECTION_ID(), @@GLOBAL.read_only, IS_USED_LOCK(?)";
    /** How the server shows a {@link #GET_LOCK} statement ({@code information_schema.PROCESSLIST.INFO}). */
    private static final String GET_LOCK_SHOWN_AS = "SELECT GET_LOCK(";

    enum Grant {
        GRANTED,
        BUSY,
        /**
         * The wait was interrupted: by the calling thread's interrupt (then still set; the server's wait was ended, or
         * none was begun), or by the server ({@code GET_LOCK} returned NULL after someone else's {@code KILL QUERY}).
         * Nothing was granted.
         */
        INTERRUPTED,
        /** The server is read-only: a replica, or a primary demoted by a failover. Nothing was granted. */
        READ_ONLY
    }

    private final ConnectionSource connections;

    SessionStatements(ConnectionSource connections) {
        this.connections = connections;
    }

    /**
     * Waits on the server until the deadline. MariaDB honours fractional timeouts; MySQL truncates them to whole
     * seconds, so there the whole seconds are waited on the server and the rest is polled. Never a negative timeout:
     * MySQL would wait forever. An interrupt of the calling thread ends the wait, and the polling, with
     * {@link Grant#INTERRUPTED} (the interrupt kept), unless the lock was granted first.
     */
    Grant getLock(PinnedSession session, String serverName, long deadline) throws SQLException {
        long remaining = Math.max(0, deadline - System.nanoTime());
        if (session.server.fractionalWaits()) {
            return getLock(session, serverName, BigDecimal.valueOf(remaining / 1_000, 6), remaining);
        }
        Grant grant = getLock(session, serverName, BigDecimal.valueOf(remaining / 1_000_000_000L), remaining);
        while (grant == Grant.BUSY && (remaining = deadline - System.nanoTime()) > 0) {
            try {
                TimeUnit.NANOSECONDS.sleep(Math.min(remaining, POLL_NANOS));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Grant.INTERRUPTED;
            }
            grant = getLock(session, serverName, BigDecimal.ZERO, 0);
        }
        return grant;
    }

    /**
     * One {@code GET_LOCK}, which also reads the session id (a reconnected session is a failure) and whether the server
     * is read-only; a lock granted on a read-only server is given back at once.
     */
    Grant getLock(PinnedSession session, String serverName, BigDecimal seconds, long waitNanos) throws SQLException {
        try {
            return getLockOnce(session, serverName, seconds, waitNanos);
        } catch (RuntimeException e) {
            throw inDoubt(e);
        }
    }

    private Grant getLockOnce(PinnedSession session, String serverName, BigDecimal seconds, long waitNanos)
            throws SQLException {
        boolean waits = waitNanos > 0;
        // A wait on the server is ended by its thread's interrupt. Only a session of one thread waits: a shared one, whose
        // co-tenants' statements a kill could reach, never does.
        boolean watched = seconds.signum() > 0 && !session.shared;
        if (watched) {
            if (Thread.currentThread().isInterrupted()) {
                return Grant.INTERRUPTED; // interrupted already: no wait is begun
            }
            if (session.connectionId == 0) {
                checkSameSession(session, connectionId(session.raw)); // a fresh session: the kill names it by its id
            }
        }
        if (waits) {
            Statements.bound(session.raw, TimeUnit.NANOSECONDS.toMillis(waitNanos) + connections.statementTimeoutMillis());
        }
        try {
            long sentAt = System.nanoTime();
            // one of the locks the session holds, to confirm them all (a reset session keeps its id, not its locks)
            String sample = session.held().isEmpty() ? serverName : session.held().keySet().iterator().next();
            PreparedStatement statement = connections.statements().prepare(session.raw, GET_LOCK);
            statement.setString(1, serverName);
            statement.setBigDecimal(2, seconds);
            statement.setString(3, sample);
            long result;
            boolean interrupted;
            boolean readOnly;
            long sampleHolder;
            WaitInterrupts.Watch watch = watched
                    ? connections.waitInterrupts().watch(session.connectionId, GET_LOCK_SHOWN_AS)
                    : null;
            try {
                try (ResultSet rs = statement.executeQuery()) {
                    rs.next();
                    result = rs.getLong(1);
                    interrupted = rs.wasNull();
                    checkSameSession(session, rs.getLong(2));
                    readOnly = rs.getInt(3) != 0;
                    sampleHolder = rs.getLong(4);
                }
            } catch (SQLException e) {
                if (watch != null) {
                    watch.close(); // no kill under way from here on, and killed() says whether one was sent
                }
                if (watch == null || !SqlErrors.isQueryInterrupted(e)) {
                    throw e;
                }
                // A kill ended the statement with an error instead of GET_LOCK's NULL (MySQL may answer so): ours, one of
                // ours whose answer was lost, or someone else's. Whether the name was granted first is unknown. This
                // session never held it (a session that holds a name is never used to wait for it), so RELEASE_LOCK gives
                // back that grant, if there was one, and nothing else.
                release(session, serverName, false);
                if (!watch.killed()) {
                    throw e;
                }
                return Grant.INTERRUPTED;
            } finally {
                if (watch != null) {
                    watch.close(); // every later statement on the session is safe from the kill
                }
            }
            if (readOnly) {
                if (!interrupted && result == 1) {
                    giveBackReadOnlyGrant(session, serverName);
                }
                return Grant.READ_ONLY;
            }
            if (!session.held().isEmpty() && sampleHolder == session.connectionId) {
                // The same server session, on a writable server, still holding a lock it was granted: it holds every
                // one (only its own RELEASE_LOCK or its end frees one). A shared session this busy may never be free for
                // a keepalive check, and a strict leader's lock on it would otherwise go unconfirmed.
                session.confirmedAt = sentAt;
                session.confirmed = true;
            }
            return interrupted ? Grant.INTERRUPTED : result == 1 ? Grant.GRANTED : Grant.BUSY;
        } finally {
            if (waits) {
                Statements.bound(session.raw, connections.statementTimeoutMillis());
            }
        }
    }

    /**
     * Gives back a lock granted on a read-only server. If that fails, the session is in doubt (it may still hold the
     * name, unknown to the engine): it must end, never go back to the pool or on serving with the lock.
     */
    private void giveBackReadOnlyGrant(PinnedSession session, String serverName) throws SQLException {
        try {
            release(session, serverName, false);
        } catch (SQLException e) {
            throw e instanceof InDoubt ? e : new InDoubt(e);
        }
    }

    /**
     * {@code RELEASE_LOCK}, and {@code RELEASE_ALL_LOCKS()} too when the session should then hold nothing.
     *
     * @return whether the server released the lock, and how many other named locks it released
     */
    Released release(PinnedSession session, String serverName, boolean releaseAll) throws SQLException {
        try {
            PreparedStatement statement = connections.statements().prepare(session.raw,
                    releaseAll ? "SELECT RELEASE_LOCK(?), RELEASE_ALL_LOCKS()" : "SELECT RELEASE_LOCK(?)");
            statement.setString(1, serverName);
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                return new Released(rs.getInt(1) == 1, releaseAll ? rs.getInt(2) : 0);
            }
        } catch (RuntimeException e) {
            throw inDoubt(e);
        }
    }

    record Released(boolean released, int others) {
    }

    /** {@code RELEASE_ALL_LOCKS()}: how many named locks the session still held. */
    int releaseAll(PinnedSession session) throws SQLException {
        try (Statement statement = session.raw.createStatement();
                ResultSet rs = statement.executeQuery("SELECT RELEASE_ALL_LOCKS()")) {
            rs.next();
            return rs.getInt(1);
        } catch (RuntimeException e) {
            throw inDoubt(e);
        }
    }

    /** The connection holding a named lock, or null if it is free. */
    static Long holderOf(Connection raw, String serverName) throws SQLException {
        try (PreparedStatement statement = raw.prepareStatement("SELECT IS_USED_LOCK(?)")) {
            statement.setString(1, serverName);
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                long id = rs.getLong(1);
                return rs.wasNull() ? null : id;
            }
        } catch (RuntimeException e) {
            throw inDoubt(e);
        }
    }

    /**
     * One statement: the session's {@code CONNECTION_ID()}, whether the server is read-only (1) or not (0), then for
     * each name the connection holding it ({@code IS_USED_LOCK}), 0 when it is free.
     */
    static long[] isUsedLocks(Connection raw, List<String> serverNames) throws SQLException {
        StringBuilder sql = new StringBuilder("SELECT CONNECTION_ID(), @@GLOBAL.read_only");
        for (int i = 0; i < serverNames.size(); i++) {
            sql.append(", IS_USED_LOCK(?)");
        }
        try (PreparedStatement statement = raw.prepareStatement(sql.toString())) {
            for (int i = 0; i < serverNames.size(); i++) {
                statement.setString(i + 1, serverNames.get(i));
            }
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                long[] result = new long[serverNames.size() + 2];
                for (int i = 0; i < result.length; i++) {
                    result[i] = rs.getLong(i + 1); // NULL reads as 0; connection ids start at 1
                }
                return result;
            }
        } catch (RuntimeException e) {
            throw inDoubt(e);
        }
    }

    /** The server session id of a connection: {@code CONNECTION_ID()}. */
    static long connectionId(Connection raw) throws SQLException {
        try (Statement statement = raw.createStatement(); ResultSet rs = statement.executeQuery("SELECT CONNECTION_ID()")) {
            rs.next();
            return rs.getLong(1);
        } catch (RuntimeException e) {
            throw inDoubt(e);
        }
    }

    /**
     * Whether the session still answers as the same server session. After an error that does not say the connection
     * failed, this tells an error of the one statement (a privilege, a time limit) from one that ended the session.
     */
    static boolean stillTheSameSession(PinnedSession session) {
        try (Statement statement = session.raw.createStatement();
                ResultSet rs = statement.executeQuery("SELECT CONNECTION_ID()")) {
            return rs.next() && rs.getLong(1) == session.connectionId;
        } catch (SQLException | RuntimeException e) {
            return false;
        }
    }

    /**
     * A statement on a pinned session ended with the driver's RuntimeException instead of an answer (a driver bug):
     * whether the server ran it is unknown, so the session is in doubt. {@link #endedBy} counts it as ended, so that the
     * session is destroyed and its locks reported lost, never left pinned; unlike a connection failure, it is not
     * retried on another connection, where the same fault would destroy one session after another.
     */
    static final class InDoubt extends SQLException {
        InDoubt(RuntimeException cause) {
            super("The lock connection failed in the driver, and its server session's state is unknown: " + cause,
                    "HY000", cause);
        }

        /** A lock granted on a read-only server could not be given back: the session may still hold it. */
        InDoubt(SQLException cause) {
            super("A lock granted on a read-only server could not be given back, so the lock connection may still hold"
                    + " it: " + SqlErrors.describe(cause), "HY000", cause);
        }
    }

    static SQLException inDoubt(RuntimeException e) {
        LOG.warn("A statement on a lock connection failed in the driver; the connection is destroyed", e);
        return new InDoubt(e);
    }

    /**
     * Whether an error of a statement on a session ended the session (or leaves it in doubt): a connection failure
     * does, and so does any error after which the session no longer answers as itself. Any other (a privilege refused,
     * a time limit of the server's) ends the one call, not the locks of the session's co-tenants.
     */
    static boolean endedBy(PinnedSession session, SQLException e) {
        return e instanceof InDoubt || SqlErrors.isConnectionFailure(e) || !stillTheSameSession(session);
    }

    static void checkSameSession(PinnedSession session, long connectionId) throws SQLException {
        if (session.connectionId == 0) {
            session.connectionId = connectionId;
        } else if (session.connectionId != connectionId) {
            throw new SQLException("The lock connection now talks to server session " + connectionId + " instead of "
                    + session.connectionId + ": it reconnected, and every named lock of the old session is gone", "08S01");
        }
    }

    /** The server version of a pinned connection. */
    ServerVersion server(Connection raw) throws SQLException {
        return connections.server(raw);
    }
}
