package io.quarkiverse.mysqllock.runtime.jdbc;

import java.sql.SQLException;

/** The server error codes this extension reacts to. */
public final class SqlErrors {

    /** MariaDB's deadlock error, also used for named-lock deadlocks (SQLSTATE 40001). */
    static final int ER_LOCK_DEADLOCK = 1213;
    /** MySQL's named-lock deadlock error. */
    static final int ER_USER_LOCK_DEADLOCK = 3058;
    static final int ER_NO_SUCH_TABLE = 1146;
    /** MySQL Group Replication: the transaction lost certification to a concurrent one, and was rolled back. */
    static final int ER_TRANSACTION_ROLLBACK_DURING_COMMIT = 3101;
    static final int ER_DUP_ENTRY = 1062;
    static final int ER_SP_DOES_NOT_EXIST = 1305;
    public static final int ER_LOCK_WAIT_TIMEOUT = 1205;
    /** {@code --read-only} or {@code --super-read-only} refused the statement. */
    static final int ER_OPTION_PREVENTS_STATEMENT = 1290;
    /** MySQL's InnoDB read-only mode. */
    static final int ER_READ_ONLY_MODE = 1836;
    /** "Query execution was interrupted" (SQLSTATE 70100): a {@code KILL QUERY} ended the statement, not its session. */
    static final int ER_QUERY_INTERRUPTED = 1317;

    private SqlErrors() {
    }

    public static boolean isDeadlock(SQLException e) {
        return e.getErrorCode() == ER_LOCK_DEADLOCK || e.getErrorCode() == ER_USER_LOCK_DEADLOCK;
    }

    /**
     * Runs {@code work}, and again after a deadlock, at most {@code attempts} times in all: for work whose statements
     * decide again when run again (a conditional {@code UPDATE}, an {@code INSERT IGNORE}), each in autocommit, so that a
     * deadlock rolled back what it did. On Galera, a write that lost certification to a concurrent one on another node
     * ends so too; on MySQL Group Replication, with error 3101.
     */
    public static <T> T retryingConflicts(int attempts, SqlWork<T> work) throws SQLException {
        for (int attempt = 1;; attempt++) {
            try {
                return work.run();
            } catch (SQLException e) {
                if (!isDeadlock(e) && e.getErrorCode() != ER_TRANSACTION_ROLLBACK_DURING_COMMIT || attempt >= attempts) {
                    throw e;
                }
            }
        }
    }

    /** A row lock was not granted within the lock wait time-out; the statement (only) was rolled back. */
    public static boolean isLockWaitTimeout(SQLException e) {
        return e.getErrorCode() == ER_LOCK_WAIT_TIMEOUT;
    }

    /**
     * The server refuses writes: it is read-only, as a replica is, or a primary demoted by a failover whose clients
     * still reach it through connections opened before.
     */
    public static boolean isReadOnly(SQLException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql && (sql.getErrorCode() == ER_OPTION_PREVENTS_STATEMENT
                    || sql.getErrorCode() == ER_READ_ONLY_MODE)) {
                return true;
            }
        }
        return false;
    }

    /** A {@code KILL QUERY} ended the statement; the session lives on. */
    public static boolean isQueryInterrupted(SQLException e) {
        return e.getErrorCode() == ER_QUERY_INTERRUPTED;
    }

    public static boolean isDuplicateKey(SQLException e) {
        return e.getErrorCode() == ER_DUP_ENTRY;
    }

    public static boolean isMissingTable(SQLException e) {
        return e.getErrorCode() == ER_NO_SUCH_TABLE;
    }

    public static boolean isMissingFunction(SQLException e) {
        return e.getErrorCode() == ER_SP_DOES_NOT_EXIST;
    }

    /** The connection itself failed (SQLSTATE class 08): the session, and every named lock of it, is gone. */
    public static boolean isConnectionFailure(SQLException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql && sql.getSQLState() != null && sql.getSQLState().startsWith("08")) {
                return true;
            }
        }
        return false;
    }

    /** A one-line description for messages: the driver's message with the server's error code and SQL state. */
    public static String describe(SQLException e) {
        return e.getMessage() + " (error " + e.getErrorCode() + ", SQLSTATE " + e.getSQLState() + ")";
    }
}
