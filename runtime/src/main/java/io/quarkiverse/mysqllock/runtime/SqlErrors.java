package io.quarkiverse.mysqllock.runtime;

import java.sql.SQLException;

/** The server error codes this extension reacts to. */
public final class SqlErrors {

    /** MariaDB's deadlock error, also used for named-lock deadlocks (SQLSTATE 40001). */
    static final int ER_LOCK_DEADLOCK = 1213;
    /** MySQL's named-lock deadlock error. */
    static final int ER_USER_LOCK_DEADLOCK = 3058;
    static final int ER_NO_SUCH_TABLE = 1146;
    static final int ER_SP_DOES_NOT_EXIST = 1305;

    private SqlErrors() {
    }

    public static boolean isDeadlock(SQLException e) {
        return e.getErrorCode() == ER_LOCK_DEADLOCK || e.getErrorCode() == ER_USER_LOCK_DEADLOCK;
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
