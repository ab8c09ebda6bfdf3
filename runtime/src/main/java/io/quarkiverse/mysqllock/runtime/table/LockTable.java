package io.quarkiverse.mysqllock.runtime.table;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

import io.quarkiverse.mysqllock.runtime.jdbc.ServerVersion;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlWork;
import io.quarkiverse.mysqllock.runtime.jdbc.Statements;

/**
 * The lock table: one row per lock name, whose {@code fence} column only grows; a row removed once unused
 * ({@link UnusedRows}) comes back with a fence above every one it had. The NAMED engine uses it for fencing tokens only;
 * the LEASE engine also keeps its leases in it.
 * <p>
 * Here: the table itself (its DDL, its creation), its rows and their fences, the run-once records, the ticks of
 * scheduled jobs, the permit counts of semaphores and read-write locks, and the row lock of
 * {@code acquireForTransaction}. The statements on the leases are in {@link LeaseStatements}, and those on the fleet's
 * reserved rows ({@code ~engine}, {@code ~live~}) in {@link FleetRows}, both of this package.
 */
public final class LockTable {

    /**
     * At most 64 characters per part, as the servers allow, and room in the table's for the suffixes of the tables named
     * after it ({@code _job}, {@code _run}, and up to 6 characters for those to come).
     */
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_$]{0,63}\\.[A-Za-z_][A-Za-z0-9_$]{0,57}"
            + "|[A-Za-z_][A-Za-z0-9_$]{0,57}");

    /** How often a statement rolled back by a deadlock is run again. */
    private static final int DEADLOCK_RETRIES = 5;

    private final String table;
    private final boolean createTable;
    private final String nextFence;
    private final String seed;
    private final String exists;

    /**
     * @throws IllegalArgumentException if the table name is not a plain (optionally schema-qualified) identifier
     */
    public LockTable(String table, boolean createTable) {
        if (table == null || !IDENTIFIER.matcher(table).matches()) {
            throw new IllegalArgumentException("quarkus.mysql-lock.table='" + table + "' is not a valid table name:"
                    + " use letters, digits, _ and $ (starting with a letter or _), at most 58 characters (the tables"
                    + " of scheduled jobs are named after it, with up to 6 characters after it, and a name has at most"
                    + " 64),"
                    + " optionally prefixed by a schema name and a dot");
        }
        this.table = table;
        this.createTable = createTable;
        // LAST_INSERT_ID(expr) hands the new value back in the same round trip as the update.
        // acquired_at: when a fence was last issued, so that the row counts as in use (UnusedRows)
        this.nextFence = "UPDATE " + table + " SET fence = LAST_INSERT_ID(fence + 1), acquired_at = UTC_TIMESTAMP(6)"
                + " WHERE name = ?";
        // A new row starts from the highest fence ever removed (UnusedRows), read under a shared lock so that a removal
        // under way is waited for: a name that comes back never gets a fence it had before. acquired_at: a row just
        // created counts as in use, so that no purge removes it before its first take or fence.
        this.seed = "INSERT IGNORE INTO " + table + " (name, fence, acquired_at) SELECT ?, COALESCE(MAX(fence), 0),"
                + " UTC_TIMESTAMP(6) FROM " + table + " WHERE name = '" + UnusedRows.FLOOR + "' LOCK IN SHARE MODE";
        this.exists = "SELECT 1 FROM " + table + " WHERE name = ?";
    }

    public String name() {
        return table;
    }

    /**
     * Runs {@code work}; if the table is missing, creates it (or explains how, when creation is disabled) and runs it
     * again.
     */
    public <T> T withTable(Connection connection, SqlWork<T> work) throws SQLException {
        try {
            return work.run();
        } catch (SQLException e) {
            if (!SqlErrors.isMissingTable(e)) {
                throw e;
            }
            if (!createTable) {
                throw new IllegalStateException("The lock table '" + table + "' does not exist and"
                        + " quarkus.mysql-lock.create-table=false. Create it with:\n" + ddl(), e);
            }
            try (Statement statement = connection.createStatement()) {
                statement.execute(ddl());
            }
            return work.run();
        }
    }

    /**
     * With table creation disabled, checks that the table exists.
     *
     * @throws IllegalStateException with the DDL to run, if it does not
     */
    private void verifyExists(Connection connection) throws SQLException {
        if (createTable) {
            return;
        }
        withTable(connection, () -> {
            try (Statement statement = connection.createStatement()) {
                statement.executeQuery("SELECT name, owner, acquired_at, expires_at, fence, completed_at FROM " + table
                        + " LIMIT 0")
                        .close();
            }
            return null;
        });
    }

    /**
     * Checks, at start-up, that the table exists when its creation is disabled, and that the columns a lease's version
     * lives in can hold it: {@code owner} wide enough for this instance's owner tokens (a server in a non-strict SQL
     * mode cuts a token short, and with it the lease length it records: watchers would count a shorter lease), and
     * {@code expires_at} to the microsecond (two renewals within a second would otherwise leave the same version, which
     * a watcher takes for a dead holder's).
     *
     * @param longestOwner the longest owner token this instance writes
     * @throws IllegalStateException saying what to create or alter
     */
    public void verify(Connection connection, int longestOwner) throws SQLException {
        verifyExists(connection);
        int dot = table.indexOf('.');
        boolean exists = false;
        boolean owner = false;
        boolean expiresAt = false;
        List<String> problems = new ArrayList<>();
        try (PreparedStatement columns = connection.prepareStatement("SELECT COLUMN_NAME, DATA_TYPE,"
                + " CHARACTER_MAXIMUM_LENGTH, DATETIME_PRECISION FROM information_schema.COLUMNS"
                + " WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?")) {
            columns.setString(1, dot < 0 ? null : table.substring(0, dot));
            columns.setString(2, table.substring(dot + 1));
            try (ResultSet rs = columns.executeQuery()) {
                while (rs.next()) {
                    exists = true;
                    String column = rs.getString(1);
                    String type = rs.getString(2);
                    if (column.equalsIgnoreCase("owner")) {
                        owner = true;
                        if (rs.getLong(3) < longestOwner) {
                            problems.add("owner is " + type.toUpperCase(Locale.ROOT) + "(" + rs.getLong(3)
                                    + "), its owner tokens need up to " + longestOwner + " characters");
                        }
                    } else if (column.equalsIgnoreCase("expires_at")) {
                        expiresAt = true;
                        if (!type.equalsIgnoreCase("datetime")) {
                            problems.add("expires_at is " + type.toUpperCase(Locale.ROOT) + ", not DATETIME"
                                    + " (a TIMESTAMP ends in 2038, before the longest lease)");
                        } else if (rs.getLong(4) < 6) {
                            problems.add("expires_at keeps " + rs.getLong(4) + " fractional digits, not 6");
                        }
                    }
                }
            }
        }
        if (exists && !owner) {
            problems.add("it has no column owner");
        }
        if (exists && !expiresAt) {
            problems.add("it has no column expires_at");
        }
        if (!problems.isEmpty()) {
            throw new IllegalStateException("The lock table '" + table + "' cannot hold a lease's version: "
                    + String.join("; ", problems) + ". Alter it as the shipped DDL (" + DDL_RESOURCE + ") has it: ALTER"
                    + " TABLE " + table + " MODIFY owner VARCHAR(255) NULL, MODIFY expires_at DATETIME(6) NOT NULL"
                    + " DEFAULT '1970-01-01 00:00:00.000000'");
        }
    }

    /** Where the table's migrations ship: a Flyway location ({@code classpath:} + this). */
    public static final String SCHEMA_LOCATION = "io/quarkiverse/mysqllock/schema";
    /** The classpath resource with the table's DDL: a Flyway repeatable migration, and what the extension runs. */
    public static final String DDL_RESOURCE = SCHEMA_LOCATION + "/R__mysql_lock.sql";
    /** The Liquibase changelog that runs {@link #DDL_RESOURCE}, marked as run where the table exists. */
    public static final String LIQUIBASE_CHANGELOG = SCHEMA_LOCATION + "/mysql-lock-changelog.xml";
    private static final String DEFAULT_NAME = "mysql_lock";

    /** The statement that creates the table: the shipped DDL, with the configured table name. */
    public String ddl() {
        return SchemaFile.statement(DDL_RESOURCE, DEFAULT_NAME, table);
    }

    /** Whether the extension creates its tables where they are missing ({@code quarkus.mysql-lock.create-table}). */
    public boolean createsTables() {
        return createTable;
    }

    /**
     * Increments and returns the fence of a name, in one round trip once the row exists. Runs in autocommit mode on the
     * connection that holds the lock, so that it succeeds only while that session, and so the lock, is alive.
     */
    public long nextFence(Connection connection, String serverName) throws SQLException {
        return nextFence(connection, serverName, "");
    }

    /** {@link #nextFence}, its increment prefixed ({@code SET STATEMENT ... FOR}, to bound its row-lock wait). */
    public long nextFence(Connection connection, String serverName, String prefix) throws SQLException {
        return withTable(connection, () -> incrementOrSeed(connection, serverName, prefix));
    }

    /**
     * Makes sure the row of a name exists without waiting for row locks: a consistent (non-locking) read first, since
     * an {@code INSERT IGNORE} of an existing key waits for a transaction that holds the row {@code FOR UPDATE} (and,
     * on a Galera node, for the replicated commits that write it).
     *
     * @return whether this call created the row
     */
    public boolean seedWithoutWaiting(Connection connection, String serverName) throws SQLException {
        return seedWithoutWaiting(connection, "", serverName);
    }

    /**
     * The same, where no row lock may be waited for either (the LEASE engine's take), as
     * {@link Statements#withoutRowWaits} has it: where another statement locks the gap the row would go into, the
     * {@code INSERT} fails with error 1205 rather than wait.
     *
     * @return whether this call created the row
     */
    public boolean seedWithoutRowWaits(Connection connection, ServerVersion server, String serverName)
            throws SQLException {
        return Statements.withoutRowWaits(connection, server,
                prefix -> seedWithoutWaiting(connection, prefix, serverName));
    }

    /**
     * The same, the {@code INSERT} sent with a prefix (such as {@link Statements#NO_ROW_WAIT}: then it fails with
     * error 1205 at once, rather than wait, where another statement locks the gap the row would go into).
     */
    private boolean seedWithoutWaiting(Connection connection, String insertPrefix, String serverName)
            throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(exists)) {
            statement.setString(1, serverName);
            try (ResultSet rs = statement.executeQuery()) {
                if (rs.next()) {
                    return false;
                }
            }
        }
        try (PreparedStatement statement = connection.prepareStatement(insertPrefix + seed)) {
            statement.setString(1, serverName);
            return statement.executeUpdate() == 1;
        }
    }

    /** Whether a run-once of this name completed. */
    public boolean completed(Connection connection, String serverName) throws SQLException {
        try (PreparedStatement statement = connection
                .prepareStatement("SELECT completed_at IS NOT NULL FROM " + table + " WHERE name = ?")) {
            statement.setString(1, serverName);
            try (ResultSet rs = statement.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    /** Records, durably, that the run-once of this name completed. */
    public void markCompleted(Connection connection, String serverName) throws SQLException {
        seed(connection, serverName);
        try (PreparedStatement statement = connection.prepareStatement(
                "UPDATE " + table + " SET completed_at = UTC_TIMESTAMP(6) WHERE name = ? AND completed_at IS NULL")) {
            statement.setString(1, serverName);
            statement.executeUpdate();
        }
    }

    /**
     * A semaphore's number of permits for the whole fleet, kept in the {@code fence} of its reserved row (a name starting
     * with {@code ~}, which no lock's row has; {@code completed_at} set, so that {@code purgeUnused} keeps it): 0 without
     * a row.
     */
    public int storedPermits(Connection connection, String row) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement("SELECT fence FROM " + table + " WHERE name = ?")) {
            statement.setString(1, row);
            try (ResultSet rs = statement.executeQuery()) {
                return rs.next() ? (int) Math.max(Math.min(rs.getLong(1), Integer.MAX_VALUE), Integer.MIN_VALUE) : 0;
            }
        }
    }

    /** Stores a semaphore's number of permits ({@link #storedPermits}) unless one is stored already. */
    public void seedPermits(Connection connection, String row, int permits) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement("INSERT IGNORE INTO " + table
                + " (name, fence, acquired_at, completed_at) VALUES (?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))")) {
            statement.setString(1, row);
            statement.setLong(2, permits);
            statement.executeUpdate();
        }
    }

    /**
     * Stores a semaphore's number of permits ({@link #storedPermits}); {@code onlyUpward}: only if it is not lower than
     * the stored one, checked by the statement itself.
     */
    public void changePermits(Connection connection, String row, int permits, boolean onlyUpward) throws SQLException {
        seedPermits(connection, row, permits);
        try (PreparedStatement statement = connection.prepareStatement("UPDATE " + table
                + " SET fence = ?, completed_at = UTC_TIMESTAMP(6) WHERE name = ?" + (onlyUpward ? " AND fence <= ?" : ""))) {
            statement.setLong(1, permits);
            statement.setString(2, row);
            if (onlyUpward) {
                statement.setLong(3, permits);
            }
            statement.executeUpdate();
        }
    }

    /** Makes sure the row of a name exists; true if this call created it. */
    public boolean seed(Connection connection, String serverName) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(seed)) {
            statement.setString(1, serverName);
            return statement.executeUpdate() == 1;
        }
    }

    private long incrementOrSeed(Connection connection, String serverName, String prefix) throws SQLException {
        for (int attempt = 1;; attempt++) {
            try {
                return incrementOrSeedOnce(connection, serverName, prefix);
            } catch (SQLException e) {
                // a seed waiting for a purge's row lock while the purge waits for the seed's lock on the floor row
                if (!SqlErrors.isDeadlock(e) || attempt >= DEADLOCK_RETRIES) {
                    throw e;
                }
            }
        }
    }

    private long incrementOrSeedOnce(Connection connection, String serverName, String prefix) throws SQLException {
        long fence = increment(connection, serverName, prefix);
        if (fence > 0) {
            return fence;
        }
        seed(connection, serverName);
        fence = increment(connection, serverName, prefix);
        if (fence <= 0) {
            throw new SQLException("The lock table '" + table + "' has no row for '" + serverName + "' after seeding it");
        }
        return fence;
    }

    private long increment(Connection connection, String serverName, String prefix) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(prefix + nextFence,
                Statement.RETURN_GENERATED_KEYS)) {
            statement.setString(1, serverName);
            return updateReturningFence(statement, serverName);
        }
    }

    /**
     * Runs an update that sets {@code fence = LAST_INSERT_ID(...)} on one row (prepared with
     * {@code RETURN_GENERATED_KEYS}): the new fence, which the server returns in the same round trip, or 0 if no row
     * matched.
     */
    public static long updateReturningFence(PreparedStatement statement, String serverName) throws SQLException {
        if (statement.executeUpdate() != 1) {
            return 0;
        }
        try (ResultSet keys = statement.getGeneratedKeys()) {
            if (!keys.next()) {
                throw new SQLException("The server returned no LAST_INSERT_ID for the fence of '" + serverName + "'");
            }
            return keys.getLong(1);
        }
    }

    /**
     * Locks a name's row in the caller's transaction ({@code SELECT ... FOR UPDATE}, followed by {@code waitClause}:
     * {@code NOWAIT}, {@code WAIT n} or nothing); false if there is no row (and so nothing was locked).
     */
    public boolean lockRow(Connection connection, String serverName, String waitClause) throws SQLException {
        try (PreparedStatement statement = connection
                .prepareStatement("SELECT fence FROM " + table + " WHERE name = ? FOR UPDATE" + waitClause)) {
            statement.setString(1, serverName);
            try (ResultSet rs = statement.executeQuery()) {
                return rs.next();
            }
        }
    }

    /** Every lock name the table has a row for, in order (none before the table exists); not the reserved rows. */
    public List<String> knownNames(Connection raw) throws SQLException {
        List<String> known = new ArrayList<>();
        try (Statement statement = raw.createStatement();
                ResultSet rs = statement
                        .executeQuery("SELECT name FROM " + table + " WHERE name NOT LIKE '~%' ORDER BY name")) {
            while (rs.next()) {
                known.add(rs.getString(1));
            }
        } catch (SQLException e) {
            if (!SqlErrors.isMissingTable(e)) {
                throw e;
            }
        }
        return known;
    }
}
