package io.quarkiverse.mysqllock.runtime.table;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;

import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;

/**
 * The tick rows of scheduled jobs (row {@code tick@<lock>} of the lock table), where versions of the extension before
 * the jobs table ({@link JobTable}) claim ticks: which ticks may still run ({@link #claimable}, the rule of the jobs
 * table and of the in-memory engine too), and the statement that claims one. The instance that claims a tick in the
 * jobs table claims it here too, so that an instance of such a version, in the same fleet during a rolling upgrade or
 * after a rollback, runs no tick twice.
 * <p>
 * A row keeps its latest tick claimed in {@code fence}, and in {@code owner} (a tick row has no owner) its settled
 * mark as {@code "<settled> <latest>"}. The pair counts only while its latest is still the row's fence: a row written
 * without it (by an older version of the extension, or its fence moved by an instance still running one) settles
 * everything below its fence. Compared as numbers (no collation involved), after checking the form (nothing to convert
 * with a warning, which strict mode turns into an error in an {@code UPDATE}).
 */
public final class TickRows {

    /**
     * How much older than the latest tick claimed a tick may be and still run late ({@link #claimable}): twice the
     * scheduler's check period, which is how late a trigger fires on a machine that keeps up. A tick that late runs
     * after the newer one: its run sees the scheduled fire times out of order.
     */
    public static final Duration WINDOW = Duration.ofSeconds(2);

    /** A tick row's settled mark, read from its columns. */
    static final String SETTLED = "IF(owner REGEXP '^[0-9]{1,18} [0-9]{1,18}$',"
            + " IF(CAST(SUBSTRING_INDEX(owner, ' ', -1) AS SIGNED) = fence, CAST(SUBSTRING_INDEX(owner, ' ', 1) AS SIGNED),"
            + " fence), fence)";

    /** {@link #claimable} in SQL, over the row's columns: four parameters, each the tick. */
    private static final String CLAIMABLE = claimable("fence", SETTLED);

    /** How many times a claim is tried when it meets deadlocks. */
    public static final int DEADLOCK_RETRIES = 5;

    private final LockTable table;

    public TickRows(LockTable table) {
        this.table = table;
    }

    /**
     * Whether a tick may still be claimed: a tick newer than the latest claimed, or one between the settled mark and
     * the latest, at most {@link #WINDOW} older than it. Quarkus checks each trigger once a second at its own phase, so
     * an instance whose check falls just before a second boundary fires tick N as another, checking just after it,
     * fires N + 1: N may then arrive after N + 1 was claimed, and it never ran. The settled mark is the tick claimed
     * before the latest (or the last such late tick claimed): every tick up to it counts as run, or as too old to run.
     * So a tick fired a moment late runs once, and a tick older than one that ran before the latest does not run.
     *
     * @param latest the latest tick claimed (0 for none)
     * @param settled the settled mark, at most {@code latest}
     */
    public static boolean claimable(long tick, long latest, long settled) {
        return tick > latest || (tick < latest && tick > settled && latest - tick <= WINDOW.toMillis());
    }

    /**
     * {@link #claimable} in SQL, over the given expressions of the latest tick and the settled mark: four parameters, each
     * the tick.
     */
    static String claimable(String latest, String settled) {
        return "(? > " + latest + " OR (? < " + latest + " AND " + latest + " <= ? + " + WINDOW.toMillis() + " AND ? > "
                + settled + "))";
    }

    /**
     * Claims one tick of a scheduled job, as {@link #claimable} says, in one conditional statement once the row exists:
     * true if this call claimed it, false if it was claimed before (or is settled). A tick above the latest becomes the
     * latest, the former latest the settled mark; a tick between them becomes the settled mark.
     */
    public boolean claim(Connection connection, String serverName, long tick) throws SQLException {
        // a seed waiting for a purge's row lock while the purge waits for the seed's lock on the floor row: the
        // statement rolled back, and the conditional update decides again
        return SqlErrors.retryingConflicts(DEADLOCK_RETRIES, () -> update(connection, serverName, tick)
                || table.seed(connection, serverName) && update(connection, serverName, tick));
    }

    /** The latest tick claimed in a job's tick row ({@code fence}); 0 where it has none. A plain read: no lock. */
    public long fence(Connection connection, String serverName) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement("SELECT fence FROM " + table.name()
                + " WHERE name = ?")) {
            statement.setString(1, serverName);
            try (java.sql.ResultSet rs = statement.executeQuery()) {
                return rs.next() ? rs.getLong(1) : 0;
            }
        }
    }

    private boolean update(Connection connection, String serverName, long tick) throws SQLException {
        // owner is assigned before fence: both server kinds then read the former fence in it
        try (PreparedStatement statement = connection.prepareStatement("UPDATE " + table.name()
                + " SET owner = IF(fence < ?, CONCAT(fence, ' ', ?), CONCAT(?, ' ', fence)), fence = GREATEST(fence, ?),"
                + " completed_at = UTC_TIMESTAMP(6) WHERE name = ? AND " + CLAIMABLE)) {
            for (int i = 1; i <= 9; i++) {
                if (i == 5) {
                    statement.setString(i, serverName);
                } else {
                    statement.setLong(i, tick);
                }
            }
            return statement.executeUpdate() == 1;
        }
    }
}
