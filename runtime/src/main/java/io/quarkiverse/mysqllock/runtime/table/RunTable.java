package io.quarkiverse.mysqllock.runtime.table;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import io.quarkiverse.mysqllock.jobs.JobRun;
import io.quarkiverse.mysqllock.jobs.RunKind;
import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlWork;

/**
 * The run history of scheduled jobs, named after the lock table with {@code _run} after it: a row per run (written as
 * it starts, completed as it ends, with the job's row of the {@link JobTable} in the same statement) and per tick
 * skipped. Its DDL ships as {@value #DDL_RESOURCE}.
 */
public final class RunTable {

    /** The classpath resource with the table's DDL: a Flyway repeatable migration, and what the extension runs. */
    public static final String DDL_RESOURCE = LockTable.SCHEMA_LOCATION + "/R__mysql_lock_run.sql";
    private static final String SHIPPED_NAME = "mysql_lock_run";
    /** The longest error class and message the table keeps. */
    static final int ERROR_CLASS_LENGTH = 255;
    static final int ERROR_MESSAGE_LENGTH = 1000;

    private final String table;
    private final boolean createTables;
    private final String insert;
    private final String end;

    public RunTable(LockTable locks, JobTable jobs) {
        this.table = locks.name() + "_run";
        this.createTables = locks.createsTables();
        this.insert = "INSERT INTO " + table + " (name, tick, kind, outcome, instance, started_at, ended_at,"
                + " error_class, error_message) VALUES (?, ?, ?, ?, ?, UTC_TIMESTAMP(6), IF(?, UTC_TIMESTAMP(6), NULL), ?, ?)";
        // No assignment reads a column another assigns: the same on both server kinds, whatever the order they assign in.
        // LEFT JOIN: the run's row ends even where its job's row is gone
        this.end = "UPDATE " + table + " r LEFT JOIN " + jobs.name() + " j ON j.name = r.name"
                + " SET r.ended_at = UTC_TIMESTAMP(6), r.outcome = ?, r.error_class = ?, r.error_message = ?,"
                + " j.last_outcome = ?, j.last_started_at = r.started_at, j.last_ended_at = UTC_TIMESTAMP(6),"
                + " j.last_success_at = IF(? = 'SUCCEEDED', UTC_TIMESTAMP(6), j.last_success_at),"
                + " j.last_failure_at = IF(? IN ('FAILED', 'LOST'), UTC_TIMESTAMP(6), j.last_failure_at)"
                + " WHERE r.id = ?";
    }

    public String name() {
        return table;
    }

    /** The statement that creates the table: the shipped DDL, with the configured name. */
    public String ddl() {
        return SchemaFile.statement(DDL_RESOURCE, SHIPPED_NAME, table);
    }

    /** Runs {@code work}; if this table is missing, creates it (or explains how) and runs it again. */
    public <T> T withTable(Connection connection, SqlWork<T> work) throws SQLException {
        return new MissingTable(table, "job history table", ddl(), createTables).creating(connection, work);
    }

    /**
     * Writes a run's row as it starts, or the row of a skipped tick (then ended as it starts): its id.
     *
     * @param serverName the job's row in the jobs table
     */
    public long insert(Connection connection, String serverName, long tick, RunKind kind, RunOutcome outcome,
            String instance, Throwable error) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(insert, Statement.RETURN_GENERATED_KEYS)) {
            statement.setString(1, serverName);
            statement.setLong(2, tick);
            statement.setString(3, kind.name());
            statement.setString(4, outcome.name());
            statement.setString(5, instance);
            statement.setBoolean(6, outcome.ended());
            statement.setString(7, errorClass(error));
            statement.setString(8, errorMessage(error));
            statement.executeUpdate();
            try (ResultSet keys = statement.getGeneratedKeys()) {
                if (!keys.next()) {
                    throw new SQLException("The server returned no id for a run of '" + serverName + "'");
                }
                return keys.getLong(1);
            }
        }
    }

    /**
     * Completes a run's row, and its job's row with it (its last outcome, and its last success or failure).
     *
     * @param error what the run threw, or null
     */
    public void end(Connection connection, long id, RunOutcome outcome, Throwable error) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(end)) {
            statement.setString(1, outcome.name());
            statement.setString(2, errorClass(error));
            statement.setString(3, errorMessage(error));
            statement.setString(4, outcome.name());
            statement.setString(5, outcome.name());
            statement.setString(6, outcome.name());
            statement.setLong(7, id);
            statement.executeUpdate();
        }
    }

    private static String errorClass(Throwable error) {
        return error == null ? null : cut(error.getClass().getName(), ERROR_CLASS_LENGTH);
    }

    private static String errorMessage(Throwable error) {
        return error == null ? null : cut(firstLine(error.getMessage()), ERROR_MESSAGE_LENGTH);
    }

    private static String firstLine(String message) {
        if (message == null) {
            return null;
        }
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }

    /** At most {@code length} characters, never splitting a surrogate pair. */
    private static String cut(String text, int length) {
        if (text == null || text.length() <= length) {
            return text;
        }
        int end = Character.isHighSurrogate(text.charAt(length - 1)) ? length - 1 : length;
        return text.substring(0, end);
    }

    /**
     * A job's history, the latest first.
     *
     * @param job the job's name as the application wrote it
     */
    public List<JobRun> history(Connection connection, String serverName, String job, int limit) throws SQLException {
        List<JobRun> runs = new ArrayList<>();
        try (PreparedStatement statement = connection.prepareStatement("SELECT tick, kind, outcome, instance,"
                + " started_at, ended_at, error_class, error_message FROM " + table
                + " WHERE name = ? ORDER BY started_at DESC, id DESC LIMIT ?")) {
            statement.setString(1, serverName);
            statement.setInt(2, limit);
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    runs.add(new JobRun(job, Instant.ofEpochMilli(rs.getLong(1)), kind(rs.getString(2)),
                            outcome(rs.getString(3)), rs.getString(4), ServerClock.instant(rs.getTimestamp(5)),
                            ServerClock.instant(rs.getTimestamp(6)), rs.getString(7), rs.getString(8)));
                }
            }
        }
        return runs;
    }

    /** An outcome the table names; one this version does not know (written by a later one) reads as FAILED. */
    static RunOutcome outcome(String name) {
        try {
            return RunOutcome.valueOf(name);
        } catch (IllegalArgumentException e) {
            return RunOutcome.FAILED;
        }
    }

    /** A kind the table names; one this version does not know reads as SCHEDULED. */
    private static RunKind kind(String name) {
        try {
            return RunKind.valueOf(name);
        } catch (IllegalArgumentException e) {
            return RunKind.SCHEDULED;
        }
    }
}
