package io.quarkiverse.mysqllock.runtime.table;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import io.quarkiverse.mysqllock.runtime.jdbc.SqlWork;

/**
 * The audit trail, named after the lock table with {@code _audit} after it: a row per change made to the fleet from
 * outside its scheduled work (a job paused or run now, a lock released by force), written with the change (in its
 * transaction where it is one). Its DDL ships
 * as {@value #DDL_RESOURCE}.
 */
public final class AuditTable {

    /** The classpath resource with the table's DDL: a Flyway repeatable migration, and what the extension runs. */
    public static final String DDL_RESOURCE = LockTable.SCHEMA_LOCATION + "/R__mysql_lock_audit.sql";
    private static final String SHIPPED_NAME = "mysql_lock_audit";
    /** The longest actor, reason and detail the table keeps. */
    public static final int ACTOR_LENGTH = 255;
    public static final int REASON_LENGTH = 1000;
    private static final int DETAIL_LENGTH = 255;

    private final String table;
    private final boolean createTables;

    public AuditTable(LockTable locks) {
        this.table = locks.name() + "_audit";
        this.createTables = locks.createsTables();
    }

    public String name() {
        return table;
    }

    /** The statement that creates the table: the shipped DDL, with the configured name. */
    public String ddl() {
        return SchemaFile.statement(DDL_RESOURCE, SHIPPED_NAME, table);
    }

    /**
     * Makes sure the table exists, creating it (or explaining how) if not: before a transaction that writes to it, since
     * a {@code CREATE TABLE} would commit that transaction half-way.
     */
    public void ensure(Connection connection) throws SQLException {
        SqlWork<Void> probe = () -> {
            try (Statement statement = connection.createStatement()) {
                statement.executeQuery("SELECT 1 FROM " + table + " LIMIT 0").close();
            }
            return null;
        };
        new MissingTable(table, "audit table", ddl(), createTables).creating(connection, probe);
    }

    /** One change, as a row of the audit trail has it. */
    public record Entry(Instant at, String action, String target, String actor, String reason, String instance,
            String detail) {
    }

    /**
     * Records a change, in the caller's transaction.
     *
     * @param targetKey the job's or lock's name on the server
     * @param target its name as the application wrote it
     */
    public void record(Connection connection, String action, String targetKey, String target, String actor,
            String reason, String instance, String detail) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement("INSERT INTO " + table
                + " (at, action, target_key, target, actor, reason, instance, detail)"
                + " VALUES (UTC_TIMESTAMP(6), ?, ?, ?, ?, ?, ?, ?)")) {
            statement.setString(1, action);
            statement.setString(2, targetKey);
            statement.setString(3, target);
            statement.setString(4, actor);
            statement.setString(5, reason);
            statement.setString(6, instance);
            statement.setString(7, detail == null || detail.length() <= DETAIL_LENGTH ? detail
                    : detail.substring(0, DETAIL_LENGTH));
            statement.executeUpdate();
        }
    }

    /** The changes made to one target, the latest first; none where the table does not exist yet. */
    public List<Entry> read(Connection connection, String targetKey, int limit) throws SQLException {
        List<Entry> entries = new ArrayList<>();
        try (PreparedStatement statement = connection.prepareStatement("SELECT at, action, target, actor, reason,"
                + " instance, detail FROM " + table + " WHERE target_key = ? ORDER BY at DESC, id DESC LIMIT ?")) {
            statement.setString(1, targetKey);
            statement.setInt(2, limit);
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    entries.add(new Entry(ServerClock.instant(rs.getTimestamp(1)), rs.getString(2), rs.getString(3),
                            rs.getString(4), rs.getString(5), rs.getString(6), rs.getString(7)));
                }
            }
        } catch (SQLException e) {
            if (io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors.isMissingTable(e)) {
                return entries;
            }
            throw e;
        }
        return entries;
    }
}
