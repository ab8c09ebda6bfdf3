package io.quarkiverse.mysqllock.runtime.table;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;

import io.quarkiverse.mysqllock.jobs.JobInfo;
import io.quarkiverse.mysqllock.jobs.JobState;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlWork;

/**
 * The jobs table, named after the lock table with {@code _job} after it: one row per scheduled job, where each tick is
 * claimed by one conditional {@code UPDATE} ({@link #claim}) and the job's state for the whole fleet is kept. Its DDL
 * ships as {@value #DDL_RESOURCE}.
 */
public final class JobTable {

    /** The classpath resource with the table's DDL: a Flyway repeatable migration, and what the extension runs. */
    public static final String DDL_RESOURCE = LockTable.SCHEMA_LOCATION + "/R__mysql_lock_job.sql";
    private static final String SHIPPED_NAME = "mysql_lock_job";
    /** What the jobs table's name adds to the lock table's (which leaves room for it). */
    private static final String SUFFIX = "_job";

    /**
     * The claim returns the former latest tick times this, plus the state's code (1, 2, 3), so that 0 (no value) is never
     * an answer.
     */
    private static final long STATES = 4;

    private final LockTable locks;
    private final String table;
    private final String seed;
    private final String claim;

    public JobTable(LockTable locks) {
        this.locks = locks;
        this.table = locks.name() + SUFFIX;
        // A job's first row starts where a version before this table left its ticks (its tick row in the lock table).
        this.seed = "INSERT IGNORE INTO " + table + " (name, job, latest_tick, settled_tick, created_at)"
                + " SELECT ?, ?, COALESCE(MAX(fence), 0), COALESCE(MAX(" + TickRows.SETTLED + "), 0), UTC_TIMESTAMP(6)"
                + " FROM " + locks.name() + " WHERE name = ?";
        // No assignment reads a column assigned before it: the same on both server kinds, whatever the order in which
        // they assign. claim_seen hands what the claim found back through LAST_INSERT_ID, in the same round trip. A tick
        // is claimed whatever the job's state, so that a tick skipped while the job was paused or disabled is decided as
        // one that ran is: none of them runs later.
        // next_fire_at: the trigger's next fire time as the claimer saw it (kept where it did not say)
        this.claim = "UPDATE " + table + " SET claim_seen = LAST_INSERT_ID(latest_tick * " + STATES
                + " + CASE UPPER(state) WHEN 'ACTIVE' THEN 1 WHEN 'PAUSED' THEN 2 ELSE 3 END),"
                + " next_fire_at = COALESCE(TIMESTAMPADD(MICROSECOND, ?, '1970-01-01 00:00:00'), next_fire_at),"
                + " settled_tick = IF(? > latest_tick, latest_tick, ?), latest_tick = GREATEST(latest_tick, ?)"
                + " WHERE name = ? AND " + TickRows.claimable("latest_tick", "settled_tick");
    }

    public String name() {
        return table;
    }

    /** The statement that creates the table: the shipped DDL, with the configured name. */
    public String ddl() {
        return SchemaFile.statement(DDL_RESOURCE, SHIPPED_NAME, table);
    }

    /**
     * Runs {@code work}; if this table or the lock table is missing, creates it (or explains how, when creation is
     * disabled) and runs it again.
     */
    public <T> T withTables(Connection connection, SqlWork<T> work) throws SQLException {
        return locks.withTable(connection, () -> withTable(connection, work));
    }

    private <T> T withTable(Connection connection, SqlWork<T> work) throws SQLException {
        return new MissingTable(table, "jobs table", ddl(), locks.createsTables()).creating(connection, work);
    }

    /**
     * Makes sure a job has its row: a new row starts from the job's tick row ({@code tickRow} of the lock table) where
     * a version before this table claimed its ticks.
     *
     * @param serverName the job's lock name on the server, the row's key
     * @param job the job's lock name as the application wrote it
     */
    public void seed(Connection connection, String serverName, String job, String tickRow) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(seed)) {
            statement.setString(1, serverName);
            statement.setString(2, job);
            statement.setString(3, tickRow);
            statement.executeUpdate();
        }
    }

    /**
     * Claims one tick of a job, as {@link TickRows#claimable} says, in one conditional statement: a tick above the latest
     * becomes the latest, the former latest the settled mark; a tick between them becomes the settled mark. What this
     * instance does with a tick it claimed depends on the job's state; nothing without a row.
     */
    public JobClaim claim(Connection connection, String serverName, long tick, Instant nextFire)
            throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(claim, Statement.RETURN_GENERATED_KEYS)) {
            if (nextFire == null) {
                statement.setNull(1, java.sql.Types.BIGINT);
            } else {
                statement.setLong(1, ServerClock.micros(nextFire));
            }
            for (int i = 2; i <= 9; i++) {
                if (i == 5) {
                    statement.setString(i, serverName);
                } else {
                    statement.setLong(i, tick);
                }
            }
            if (statement.executeUpdate() != 1) {
                return JobClaim.TAKEN;
            }
            try (ResultSet keys = statement.getGeneratedKeys()) {
                if (!keys.next()) {
                    throw new SQLException("The server returned no LAST_INSERT_ID for the claim of a tick of '"
                            + serverName + "'");
                }
                long seen = keys.getLong(1);
                return JobClaim.claimed((int) (seen % STATES), seen / STATES);
            }
        }
    }

    /**
     * Gives back the claim of a tick this instance could not run, unless another claim came since: a later fire of the
     * tick may claim it again. A tick claimed above the latest leaves the former latest as both the latest and the
     * settled mark; a tick claimed late, between them, leaves the settled mark just below it.
     *
     * @param previousLatest the latest tick before the claim ({@link JobClaim#previousLatest})
     * @return whether the claim was given back
     */
    public boolean unclaim(Connection connection, String serverName, long tick, long previousLatest)
            throws SQLException {
        boolean above = tick > previousLatest;
        try (PreparedStatement statement = connection.prepareStatement("UPDATE " + table
                + " SET latest_tick = ?, settled_tick = ? WHERE name = ? AND latest_tick = ? AND settled_tick = ?")) {
            statement.setLong(1, previousLatest);
            statement.setLong(2, above ? previousLatest : tick - 1);
            statement.setString(3, serverName);
            statement.setLong(4, above ? tick : previousLatest);
            statement.setLong(5, above ? previousLatest : tick);
            return statement.executeUpdate() == 1;
        }
    }

    /**
     * A job's state, its row locked until the caller's transaction ends: null where it has no row (or the table does
     * not exist yet).
     */
    public JobState lockState(Connection connection, String serverName) throws SQLException {
        return state(connection, serverName, " FOR UPDATE");
    }

    /** A job's state, read: null where it has no row (or the table does not exist yet). */
    public JobState state(Connection connection, String serverName) throws SQLException {
        return state(connection, serverName, "");
    }

    private JobState state(Connection connection, String serverName, String locking) throws SQLException {
        try (PreparedStatement statement = connection
                .prepareStatement("SELECT state FROM " + table + " WHERE name = ?" + locking)) {
            statement.setString(1, serverName);
            try (ResultSet rs = statement.executeQuery()) {
                return rs.next() ? JobState.of(rs.getString(1)) : null;
            }
        } catch (SQLException e) {
            if (SqlErrors.isMissingTable(e)) {
                return null;
            }
            throw e;
        }
    }

    /** Sets a job's state for the whole fleet, with who changed it and when. */
    public void setState(Connection connection, String serverName, JobState state, String by) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement("UPDATE " + table
                + " SET state = ?, changed_at = UTC_TIMESTAMP(6), changed_by = ? WHERE name = ?")) {
            statement.setString(1, state.name());
            statement.setString(2, by);
            statement.setString(3, serverName);
            statement.executeUpdate();
        }
    }

    /** What {@link #silences} finds of one job. */
    @FunctionalInterface
    public interface SilenceFound {
        void accept(String key, String job, JobState state, long sinceMicros, boolean neverSucceeded);
    }

    /**
     * Every job's time without a success anywhere in the fleet, in microseconds of the server's clock (no instance's
     * clock is compared with the server's): since its last success, its row's creation if it never succeeded, or the
     * last change of its state if later (a job resumed or enabled starts watched afresh).
     */
    public void silences(Connection connection, SilenceFound found) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement("SELECT name, job, state,"
                + " TIMESTAMPDIFF(MICROSECOND, GREATEST(COALESCE(last_success_at, created_at),"
                + " COALESCE(changed_at, last_success_at, created_at)), UTC_TIMESTAMP(6)), last_success_at IS NULL"
                + " FROM " + table)) {
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    found.accept(rs.getString(1), rs.getString(2), JobState.of(rs.getString(3)),
                            Math.max(0, rs.getLong(4)), rs.getBoolean(5));
                }
            }
        }
    }

    /**
     * Every job's row, or the one of {@code serverName} (when not null), each with its key: {@code jobs} is given the
     * key and the job as {@link JobInfo} has it.
     */
    public void read(Connection connection, String serverName, java.util.function.BiConsumer<String, JobInfo> jobs)
            throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement("SELECT name, job, state, latest_tick,"
                + " last_outcome, last_started_at, last_ended_at, last_success_at, last_failure_at, next_fire_at FROM "
                + table
                + (serverName == null ? " ORDER BY job" : " WHERE name = ?"))) {
            if (serverName != null) {
                statement.setString(1, serverName);
            }
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    String outcome = rs.getString(5);
                    jobs.accept(rs.getString(1), new JobInfo(rs.getString(2), JobState.of(rs.getString(3)),
                            rs.getLong(4) == 0 ? null : Instant.ofEpochMilli(rs.getLong(4)),
                            ServerClock.instant(rs.getTimestamp(10)),
                            outcome == null ? null : RunTable.outcome(outcome), ServerClock.instant(rs.getTimestamp(6)),
                            ServerClock.instant(rs.getTimestamp(7)), ServerClock.instant(rs.getTimestamp(8)),
                            ServerClock.instant(rs.getTimestamp(9))));
                }
            }
        }
    }
}
