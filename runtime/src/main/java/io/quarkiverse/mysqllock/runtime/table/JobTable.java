package io.quarkiverse.mysqllock.runtime.table;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

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
     * The claim returns ((the former latest tick times this, plus the state's code: 1, 2, 3) times {@link #FLAGS}, plus 4
     * for a pending range of missed ticks replaced, 2 for a gap and 1 for a catch-up pending), so that 0 (no value) is
     * never an answer.
     */
    private static final long STATES = 4;
    private static final long FLAGS = 8;

    /** The claim's parameters, by the names its text gives them: the tick, the missed-before mark, the next fire. */
    private static final String TICK = ":tick";
    private static final String MISSED_BEFORE = ":missedBefore";
    private static final String NEXT_FIRE = ":nextFire";
    private static final String NAME = ":name";
    private static final String OLDER_FENCE = ":olderFence";

    private final LockTable locks;
    private final String table;
    private final String seed;
    private final String claim;
    private final String ddl;
    /** The claim's parameters in the order of its text. */
    private final List<String> claimParameters = new ArrayList<>();

    public JobTable(LockTable locks) {
        this.locks = locks;
        this.table = locks.name() + SUFFIX;
        this.ddl = SchemaFile.statement(DDL_RESOURCE, SHIPPED_NAME, table);
        // A job's first row starts where a version before this table left its ticks (its tick row in the lock table).
        this.seed = "INSERT IGNORE INTO " + table + " (name, job, latest_tick, settled_tick, created_at)"
                + " SELECT ?, ?, COALESCE(MAX(fence), 0), COALESCE(MAX(" + TickRows.SETTLED + "), 0), UTC_TIMESTAMP(6)"
                + " FROM " + locks.name() + " WHERE name = ?";
        // No assignment reads a column assigned before it: the same on both server kinds, whatever the order in which
        // they assign. claim_seen hands what the claim found back through LAST_INSERT_ID, in the same round trip. A tick
        // is claimed whatever the job's state, so that a tick skipped while the job was paused or disabled is decided as
        // one that ran is: none of them runs later.
        // next_fire_at: the trigger's next fire time as the claimer saw it (kept where it did not say)
        // A gap (JobClaim.isGap): ticks no instance claimed, recorded in catch_up_from (exclusive) and catch_up_to for a
        // catch-up, and the settled mark set just below the tick, so that none of them is claimed late besides. A paused
        // job's claimed tick is recorded to catch up too (in a job that catches up: its missed-before mark above 0).
        // The gap is judged from the latest tick any instance fired: claimed and run, claimed and given back because
        // the lock was busy (fired_tick: skipped as the job says, not missed), or claimed in the tick row by a version
        // before this table (:olderFence, after a rollback or beside this one during a rolling upgrade). A range of
        // missed ticks starts after the latest tick that ran here or there.
        String ran = "GREATEST(latest_tick, :olderFence)";
        String fired = "GREATEST(latest_tick, fired_tick, :olderFence)";
        String gap = "(latest_tick > 0 AND :tick > latest_tick AND :missedBefore > " + fired
                + " AND UPPER(state) IN ('ACTIVE', 'PAUSED'))";
        String paused = "(:missedBefore > 0 AND :tick > latest_tick AND UPPER(state) = 'PAUSED')";
        String pending = "(UPPER(state) = 'ACTIVE' AND :missedBefore > 0 AND (catch_up_to > 0 OR next_catch_up_to > 0"
                + " OR " + gap + "))";
        // Two ranges of missed ticks per job: new ones extend a pending range that ends at the latest tick that ran (the
        // ticks of a pause); where ticks ran after the pending range, they are the next range, kept apart (merged, the
        // range would take the ticks that ran between them: they would run twice), and caught up after it. A third
        // range apart from both replaces the next one: the claim says so, and its claimer warns. The ticks recorded are
        // settled: none of them is claimed late besides.
        String recorded = "(" + gap + " OR " + paused + ")";
        String apart = "(" + recorded + " AND catch_up_to > 0 AND catch_up_to < " + ran + ")";
        String replaced = "(" + apart + " AND next_catch_up_to > 0 AND next_catch_up_to < " + ran + ")";
        String from = "IF(" + gap + ", " + fired + ", " + ran + ")";
        String to = "IF(" + paused + ", :tick, :tick - 1)";
        // the next range's columns before the pending range's: each assignment reads the columns as they were
        this.claim = named("UPDATE " + table + " SET claim_seen = LAST_INSERT_ID((latest_tick * " + STATES
                + " + CASE UPPER(state) WHEN 'ACTIVE' THEN 1 WHEN 'PAUSED' THEN 2 ELSE 3 END) * " + FLAGS
                + " + IF(" + replaced + ", 4, 0) + IF(" + gap + ", 2, 0) + IF(" + pending + ", 1, 0)),"
                + " next_fire_at = COALESCE(TIMESTAMPADD(MICROSECOND, :nextFire, '1970-01-01 00:00:00'), next_fire_at),"
                + " next_catch_up_from = IF(" + apart + " AND (next_catch_up_to = 0 OR next_catch_up_to < " + ran
                + "), " + from + ", next_catch_up_from),"
                + " next_catch_up_to = IF(" + apart + ", " + to + ", next_catch_up_to),"
                + " catch_up_from = IF(" + recorded + " AND catch_up_to = 0, " + from + ", catch_up_from),"
                + " catch_up_to = IF(" + recorded + " AND NOT " + apart + ", " + to + ", catch_up_to),"
                + " settled_tick = IF(:tick > latest_tick, IF(" + recorded + ", :tick - 1, latest_tick), :tick),"
                + " latest_tick = GREATEST(latest_tick, :tick), fired_tick = GREATEST(fired_tick, :tick)"
                + " WHERE name = :name AND " + TickRows.claimable("latest_tick", "settled_tick").replace("?", TICK),
                claimParameters);
    }

    /** {@code sql} with each {@code :name} parameter a {@code ?}, the names added to {@code order} as they come. */
    private static String named(String sql, List<String> order) {
        java.util.regex.Matcher parameter = java.util.regex.Pattern.compile(":[a-zA-Z]+").matcher(sql);
        StringBuilder text = new StringBuilder();
        while (parameter.find()) {
            order.add(parameter.group());
            parameter.appendReplacement(text, "?");
        }
        return parameter.appendTail(text).toString();
    }

    public String name() {
        return table;
    }

    /** The statement that creates the table: the shipped DDL, with the configured name. */
    public String ddl() {
        return ddl;
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
     * instance does with a tick it claimed depends on the job's state; nothing without a row. A job that catches up
     * records the ticks missed before it ({@link JobClaim#isGap}), and a tick claimed while it is paused.
     *
     * @param missedBefore the job's latest scheduled tick more than {@link TickRows#WINDOW} before {@code tick}; 0 for a
     *        job that does not catch up
     * @param olderFence the latest tick claimed in the job's tick row of the lock table, where versions before this
     *        table claim ticks ({@link TickRows#fence}); 0 for a job that does not catch up
     */
    public JobClaim claim(Connection connection, String serverName, long tick, long missedBefore, long olderFence,
            Instant nextFire) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(claim, Statement.RETURN_GENERATED_KEYS)) {
            for (int i = 0; i < claimParameters.size(); i++) {
                switch (claimParameters.get(i)) {
                    case TICK -> statement.setLong(i + 1, tick);
                    case MISSED_BEFORE -> statement.setLong(i + 1, missedBefore);
                    case NAME -> statement.setString(i + 1, serverName);
                    case OLDER_FENCE -> statement.setLong(i + 1, olderFence);
                    case NEXT_FIRE -> {
                        if (nextFire == null) {
                            statement.setNull(i + 1, java.sql.Types.BIGINT);
                        } else {
                            statement.setLong(i + 1, ServerClock.micros(nextFire));
                        }
                    }
                    default -> throw new IllegalStateException("A claim parameter without a value: " + claimParameters);
                }
            }
            if (JobColumns.executeUpdate(statement, connection, table, ddl) != 1) {
                return JobClaim.TAKEN;
            }
            try (ResultSet keys = statement.getGeneratedKeys()) {
                if (!keys.next()) {
                    throw new SQLException("The server returned no LAST_INSERT_ID for the claim of a tick of '"
                            + serverName + "'");
                }
                long seen = keys.getLong(1);
                return JobClaim.claimed((int) (seen / FLAGS % STATES), seen / FLAGS / STATES, (seen & 2) != 0,
                        (seen & 1) != 0, (seen & 4) != 0);
            }
        }
    }

    /**
     * Gives back the claim of a tick this instance could not run, unless another claim came since: a later fire of the
     * tick may claim it again. A tick claimed above the latest leaves the former latest as both the latest and the
     * settled mark (or, where the claim found a gap, the settled mark it set: the missed ticks are the catch-up's); a tick
     * claimed late, between them, leaves the settled mark just below it.
     *
     * @param claim what the claim found
     * @return whether the claim was given back
     */
    public boolean unclaim(Connection connection, String serverName, long tick, JobClaim claim)
            throws SQLException {
        long previousLatest = claim.previousLatest();
        boolean above = tick > previousLatest;
        long settledByClaim = claim.gap() ? tick - 1 : previousLatest;
        try (PreparedStatement statement = connection.prepareStatement("UPDATE " + table
                + " SET latest_tick = ?, settled_tick = ? WHERE name = ? AND latest_tick = ? AND settled_tick = ?")) {
            statement.setLong(1, above ? settledByClaim : previousLatest);
            statement.setLong(2, above ? settledByClaim : tick - 1);
            statement.setString(3, serverName);
            statement.setLong(4, above ? tick : previousLatest);
            statement.setLong(5, above ? settledByClaim : tick);
            return statement.executeUpdate() == 1;
        }
    }

    /** The statements that read and take a job's ranges of missed ticks, on this table. */
    public CatchUpRanges catchUps() {
        return new CatchUpRanges(table, ddl);
    }

    /**
     * Queues one run of a job ({@code overlap=queue-one}): {@code tick} fired while a run of the job lasted. The latest
     * such tick is kept, whatever the job's state.
     */
    public void queue(Connection connection, String serverName, long tick) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement("UPDATE " + table
                + " SET queued_tick = GREATEST(queued_tick, ?) WHERE name = ?")) {
            statement.setLong(1, tick);
            statement.setString(2, serverName);
            JobColumns.executeUpdate(statement, connection, table, ddl);
        }
    }

    /** A row whose queued tick is due: no newer tick claimed since it was queued, and the job active. */
    private static final String QUEUED_DUE = "queued_tick >= latest_tick AND UPPER(state) = 'ACTIVE'";

    /**
     * The tick of a job's queued run ({@link #queue}) while the job is active; 0 for none. A tick claimed after the
     * queued one (it ran, was queued in turn, or was skipped while the job was paused) makes it no longer due.
     */
    public long queued(Connection connection, String serverName) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement("SELECT queued_tick FROM " + table
                + " WHERE name = ? AND queued_tick > 0 AND " + QUEUED_DUE)) {
            statement.setString(1, serverName);
            return JobColumns.described(() -> {
                try (ResultSet rs = statement.executeQuery()) {
                    return rs.next() ? rs.getLong(1) : 0L;
                }
            }, connection, table, ddl);
        }
    }

    /**
     * Takes a job's queued run, as {@link #queued} read it, unless it changed since or the job is no longer active.
     *
     * @return whether this call took it
     */
    public boolean takeQueued(Connection connection, String serverName, long tick) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement("UPDATE " + table
                + " SET queued_tick = 0 WHERE name = ? AND queued_tick = ? AND " + QUEUED_DUE)) {
            statement.setString(1, serverName);
            statement.setLong(2, tick);
            return JobColumns.executeUpdate(statement, connection, table, ddl) == 1;
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

    /**
     * Sets a job's state for the whole fleet, with who changed it and when. Enabling a disabled job marks {@code now}
     * as fired: the ticks until then were skipped for good, and the next claim finds no gap in them.
     */
    public void setState(Connection connection, String serverName, JobState state, String by, long now)
            throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement("UPDATE " + table
        // a disabled job's missed ticks are not caught up, nor those it had to catch up then; state assigned last
                + " SET catch_up_from = IF(? = 'DISABLED', 0, catch_up_from), catch_up_to = IF(? = 'DISABLED', 0,"
                + " catch_up_to), next_catch_up_from = IF(? = 'DISABLED', 0, next_catch_up_from),"
                + " next_catch_up_to = IF(? = 'DISABLED', 0, next_catch_up_to),"
                + " fired_tick = IF(UPPER(state) = 'DISABLED' AND ? <> 'DISABLED',"
                + " GREATEST(fired_tick, ?), fired_tick), changed_at = UTC_TIMESTAMP(6), changed_by = ?, state = ?"
                + " WHERE name = ?")) {
            for (int i = 1; i <= 5; i++) {
                statement.setString(i, state.name());
            }
            statement.setLong(6, now);
            statement.setString(7, by);
            statement.setString(8, state.name());
            statement.setString(9, serverName);
            JobColumns.executeUpdate(statement, connection, table, ddl);
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
