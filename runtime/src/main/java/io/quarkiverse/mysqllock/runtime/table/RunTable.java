package io.quarkiverse.mysqllock.runtime.table;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

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
        // The job's last run is the one that started last: a run that ends after a later one started (a long run of a
        // tick, a late tick) leaves it. The server may assign in any order (a multi-table UPDATE): last_started_at
        // becomes the greater of the two, and "this run started last" reads the same before and after that assignment.
        // LEFT JOIN: the run's row ends even where its job's row is gone.
        String last = "r.started_at >= COALESCE(j.last_started_at, r.started_at)";
        this.end = "UPDATE " + table + " r LEFT JOIN " + jobs.name() + " j ON j.name = r.name"
                + " SET r.ended_at = UTC_TIMESTAMP(6), r.outcome = ?, r.error_class = ?, r.error_message = ?,"
                + " j.last_outcome = IF(" + last + ", ?, j.last_outcome),"
                + " j.last_ended_at = IF(" + last + ", UTC_TIMESTAMP(6), j.last_ended_at),"
                + " j.last_started_at = GREATEST(COALESCE(j.last_started_at, r.started_at), r.started_at),"
                // a run-now says nothing of the schedule: a job whose trigger never fires stays silent
                + " j.last_success_at = IF(? = 'SUCCEEDED' AND r.kind <> 'RUN_NOW', UTC_TIMESTAMP(6), j.last_success_at),"
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

    /** The class of what a run threw, as the history keeps it: null for none. */
    public static String errorClass(Throwable error) {
        return error == null ? null : cut(error.getClass().getName(), ERROR_CLASS_LENGTH);
    }

    /** The first line of what a run threw, as the history keeps it (at most 1,000 characters): null for none. */
    public static String errorMessage(Throwable error) {
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

    /** The outcomes of ticks the claimer skipped: kept apart from runs, so that a flood of skips never pushes runs out. */
    private static final List<RunOutcome> SKIPPED = List.of(RunOutcome.SKIPPED_BUSY, RunOutcome.NOT_ACQUIRED,
            RunOutcome.SKIPPED_PAUSED, RunOutcome.QUEUED);
    static final String SKIPS = "outcome IN (" + String.join(", ", SKIPPED.stream().map(o -> "'" + o + "'").toList())
            + ")";

    /** Whether a row of this outcome is a tick skipped, not a run. */
    public static boolean skipped(RunOutcome outcome) {
        return SKIPPED.contains(outcome);
    }

    /**
     * Removes a job's rows the retention does not keep: those beyond the latest {@code keepRuns} runs, those beyond the
     * latest {@code keepRuns} skipped ticks, and those that started more than {@code keepForMicros} ago. A run that has
     * not ended stays a day longer than that (its instance may still end it, after a later run ended). Each batch reads
     * at most {@code batch} ids in the job's order, then deletes them by primary key, in autocommit: deterministic for
     * statement-based replication, and locking only the rows it removes. At most {@code maxBatches}: the rest waits for
     * the next call.
     *
     * @return the rows removed
     */
    public int purge(Connection connection, String serverName, int keepRuns, long keepForMicros, int batch,
            int maxBatches) throws SQLException {
        String old = "started_at < UTC_TIMESTAMP(6) - INTERVAL " + keepForMicros + " MICROSECOND"
                + " AND (ended_at IS NOT NULL OR started_at < UTC_TIMESTAMP(6) - INTERVAL "
                + (keepForMicros + TimeUnit.DAYS.toMicros(1)) + " MICROSECOND)";
        Batches batches = new Batches(connection, serverName, batch, maxBatches);
        batches.remove(old, List.of());
        for (String kind : List.of("NOT " + SKIPS, SKIPS)) {
            // the newest row of this kind beyond the ones kept: it and every older ended one go
            String startedAt = null;
            long id = 0;
            try (PreparedStatement first = connection.prepareStatement("SELECT started_at, id FROM " + table
                    + " WHERE name = ? AND " + kind + " ORDER BY started_at DESC, id DESC LIMIT 1 OFFSET ?")) {
                first.setString(1, serverName);
                first.setInt(2, keepRuns);
                try (ResultSet rs = first.executeQuery()) {
                    if (rs.next()) {
                        startedAt = rs.getString(1); // as the server wrote it: no time zone in between
                        id = rs.getLong(2);
                    }
                }
            }
            if (startedAt != null) {
                batches.remove(kind + " AND ended_at IS NOT NULL AND (started_at < ? OR started_at = ? AND id <= ?)",
                        List.of(startedAt, startedAt, id));
            }
        }
        return batches.removed;
    }

    /** The batches of one purge: each reads a batch of ids in the job's order, then deletes them by primary key. */
    private final class Batches {
        private final Connection connection;
        private final String serverName;
        private final int batch;
        private int left;
        int removed;

        Batches(Connection connection, String serverName, int batch, int maxBatches) {
            this.connection = connection;
            this.serverName = serverName;
            this.batch = batch;
            this.left = maxBatches;
        }

        /** Removes the job's rows that match {@code condition} (with its parameters), batch by batch. */
        void remove(String condition, List<Object> parameters) throws SQLException {
            while (left > 0) {
                left--;
                List<Long> ids = new ArrayList<>();
                try (PreparedStatement select = connection.prepareStatement("SELECT id FROM " + table
                        + " WHERE name = ? AND " + condition + " ORDER BY started_at, id LIMIT " + batch)) {
                    select.setString(1, serverName);
                    for (int i = 0; i < parameters.size(); i++) {
                        select.setObject(i + 2, parameters.get(i));
                    }
                    try (ResultSet rs = select.executeQuery()) {
                        while (rs.next()) {
                            ids.add(rs.getLong(1));
                        }
                    }
                }
                if (ids.isEmpty()) {
                    return;
                }
                try (PreparedStatement delete = connection.prepareStatement("DELETE FROM " + table + " WHERE id IN ("
                        + String.join(", ", java.util.Collections.nCopies(ids.size(), "?")) + ")")) {
                    for (int i = 0; i < ids.size(); i++) {
                        delete.setLong(i + 1, ids.get(i));
                    }
                    removed += delete.executeUpdate();
                }
                if (ids.size() < batch) {
                    return;
                }
            }
        }
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
