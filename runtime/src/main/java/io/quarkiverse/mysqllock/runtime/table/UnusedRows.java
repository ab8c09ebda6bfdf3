package io.quarkiverse.mysqllock.runtime.table;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.runtime.jdbc.ServerVersion;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;
import io.quarkiverse.mysqllock.runtime.jdbc.Statements;

/**
 * Removes the rows of names nobody used for a while, without letting any name's fence go back: the highest fence ever
 * removed is kept in the reserved row {@value #FLOOR} (raised in the same transaction as the removal, under its row
 * lock), and a row seeded again later starts from it ({@link LockTable}'s seed reads it under a shared lock), so a name
 * that comes back gets fences above every one it had. Rows in use are never removed: an unexpired lease, a lease or a
 * fence taken within the period, a row created within it, a run-once completion, a scheduled job's last tick, the
 * fleet's reserved rows, a row locked at that moment (by a transaction, a take, another purge).
 * <p>
 * A purge waits for no row lock: it would hold the rows it locked so far meanwhile (their leases could not be renewed),
 * and a transaction waiting for the same row would find it gone. A locked candidate is skipped ({@code SKIP LOCKED}),
 * or, on a server without it, its batch is left for the next purge; so are the batches whose floor row is locked. (Not
 * {@code READ COMMITTED}, which would lock fewer rows: InnoDB refuses it under statement-based binary logging.)
 */
public final class UnusedRows {

    private static final Logger LOG = Logger.getLogger(UnusedRows.class);

    /** The reserved row whose fence is at least every fence of a removed row. */
    public static final String FLOOR = "~fence-floor";
    /** Rows removed per transaction, so that no transaction holds many row locks for long. */
    static final int BATCH = 1000;
    private static final int DEADLOCK_RETRIES = 10;

    /**
     * The rule of an unused row (parameters: the period twice, then max-clock-skew, in microseconds), checked again under
     * the row locks. An owned row goes only once it is long dead (ended longer ago than max-clock-skew by this server's
     * clock): a holder may still hold a lease this server sees expired, and an instance watching it may take it over.
     */
    private static final String UNUSED = " AND name NOT LIKE '~%' AND completed_at IS NULL"
            + " AND expires_at <= UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND"
            + " AND (acquired_at IS NULL OR acquired_at <= UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND)"
            + " AND (owner IS NULL OR expires_at < UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND)";

    private final LockTable table;
    /** quarkus.mysql-lock.lease.max-clock-skew, in microseconds. */
    private final long longDeadMicros;

    public UnusedRows(LockTable table, long longDeadMicros) {
        this.table = table;
        this.longDeadMicros = longDeadMicros;
    }

    /**
     * Removes the rows unused for {@code unusedMicros} or longer, in transactions of up to {@value #BATCH} rows on this
     * connection (left in autocommit mode): how many it removed.
     */
    public long purge(Connection raw, ServerVersion server, long unusedMicros) throws SQLException {
        return table.withTable(raw, () -> {
            long removed = 0;
            int skipped = 0;
            String after = "";
            while (true) {
                List<String> candidates = candidates(raw, after, unusedMicros);
                if (!candidates.isEmpty()) {
                    int batch = removeBatch(raw, server, candidates, unusedMicros);
                    if (batch < 0) {
                        skipped++;
                    } else {
                        removed += batch;
                    }
                    after = candidates.get(candidates.size() - 1);
                }
                if (candidates.size() < BATCH) {
                    if (skipped > 0) {
                        LOG.infof("purgeUnused of lock table '%s' left %d batch(es) of up to %d rows for a later purge:"
                                + " rows of theirs were locked", table.name(), skipped, BATCH);
                    }
                    return removed;
                }
            }
        });
    }

    /**
     * The next names that look unused, after {@code after} in name order: a plain consistent read, which locks nothing
     * (a locking scan would hold every row it passes, and stall every lease of the table meanwhile).
     */
    private List<String> candidates(Connection raw, String after, long unusedMicros) throws SQLException {
        List<String> names = new ArrayList<>();
        try (PreparedStatement statement = raw.prepareStatement("SELECT name FROM " + table.name() + " WHERE name > ?"
                + UNUSED + " ORDER BY name LIMIT " + BATCH)) {
            statement.setString(1, after);
            statement.setLong(2, unusedMicros);
            statement.setLong(3, unusedMicros);
            statement.setLong(4, longDeadMicros);
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    names.add(rs.getString(1));
                }
            }
        }
        return names;
    }

    /** How many rows the batch removed, or -1 if a row it needed was locked (left for a later purge). */
    private int removeBatch(Connection raw, ServerVersion server, List<String> candidates, long unusedMicros)
            throws SQLException {
        for (int attempt = 1;; attempt++) {
            try {
                return Statements.withoutRowWaits(raw, server,
                        prefix -> removeOnce(raw, server, prefix, candidates, unusedMicros));
            } catch (SQLException e) {
                if (SqlErrors.isLockWaitTimeout(e)) {
                    return -1;
                }
                if (!SqlErrors.isDeadlock(e) || attempt >= DEADLOCK_RETRIES) {
                    throw e;
                }
            }
        }
    }

    /**
     * One transaction: locks the candidates that are still unused (by their keys: only those rows), raises the floor to
     * their highest fence, removes them. The floor is locked last, so that seeds of new rows wait only for this
     * transaction's last statements.
     */
    private int removeOnce(Connection raw, ServerVersion server, String prefix, List<String> candidates,
            long unusedMicros) throws SQLException {
        String t = table.name();
        raw.setAutoCommit(false);
        boolean committed = false;
        try {
            List<String> names = new ArrayList<>();
            long highest = 0;
            // SKIP LOCKED waits for nothing by itself (and MariaDB 11.4 fails the COMMIT of a transaction whose SKIP
            // LOCKED read ran with innodb_lock_wait_timeout = 0 and met a lock: error 1180)
            try (PreparedStatement unused = raw.prepareStatement((server.skipLocked() ? "" : prefix)
                    + "SELECT name, fence FROM " + t + " WHERE name IN (" + placeholders(candidates.size()) + ")" + UNUSED
                    + " FOR UPDATE" + (server.skipLocked() ? " SKIP LOCKED" : ""))) {
                int index = 1;
                for (String name : candidates) {
                    unused.setString(index++, name);
                }
                unused.setLong(index++, unusedMicros);
                unused.setLong(index++, unusedMicros);
                unused.setLong(index, longDeadMicros);
                unused.execute(); // not executeQuery: the driver takes a SET STATEMENT prefix for a statement without rows
                try (ResultSet rs = unused.getResultSet()) {
                    while (rs.next()) {
                        names.add(rs.getString(1));
                        highest = Math.max(highest, rs.getLong(2));
                    }
                }
            }
            if (!names.isEmpty()) {
                try (PreparedStatement floor = raw
                        .prepareStatement(prefix + "INSERT IGNORE INTO " + t + " (name, fence) VALUES (?, 0)")) {
                    floor.setString(1, FLOOR);
                    floor.executeUpdate();
                }
                try (PreparedStatement raise = raw.prepareStatement(
                        prefix + "UPDATE " + t + " SET fence = GREATEST(fence, ?) WHERE name = ?")) {
                    raise.setLong(1, highest);
                    raise.setString(2, FLOOR);
                    raise.executeUpdate();
                }
                try (PreparedStatement delete = raw.prepareStatement(prefix + "DELETE FROM " + t + " WHERE name IN ("
                        + placeholders(names.size()) + ")")) {
                    for (int i = 0; i < names.size(); i++) {
                        delete.setString(i + 1, names.get(i));
                    }
                    delete.executeUpdate();
                }
            }
            raw.commit();
            committed = true;
            return names.size();
        } finally {
            try {
                if (!committed) {
                    raw.rollback();
                }
            } finally {
                raw.setAutoCommit(true);
            }
        }
    }

    private static String placeholders(int count) {
        return "?" + ", ?".repeat(Math.max(0, count - 1));
    }
}
