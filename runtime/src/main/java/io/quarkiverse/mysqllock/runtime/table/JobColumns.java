package io.quarkiverse.mysqllock.runtime.table;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The columns of a jobs table created from an earlier build's DDL: a statement that names a column the table lacks
 * fails with a message that says which, and the {@code ALTER TABLE} that adds them as the shipped DDL has them.
 */
final class JobColumns {

    /** MySQL's and MariaDB's "Unknown column" error. */
    private static final int ER_BAD_FIELD_ERROR = 1054;
    /** A column's line of the shipped DDL: two spaces, its name, its definition. */
    private static final Pattern COLUMN = Pattern.compile("^  ([a-z_]+) (.+?),?$", Pattern.MULTILINE);

    private JobColumns() {
    }

    /**
     * {@code statement}'s update count; where it names a column {@code table} lacks, an {@link SQLException} saying
     * which, and how to add them.
     */
    static int executeUpdate(PreparedStatement statement, Connection connection, String table, String ddl)
            throws SQLException {
        return described(statement::executeUpdate, connection, table, ddl);
    }

    /** A statement's work on the jobs table. */
    @FunctionalInterface
    interface Work<T> {
        T run() throws SQLException;
    }

    /** What {@code work} returns; where it names a column {@code table} lacks, as {@link #executeUpdate}. */
    static <T> T described(Work<T> work, Connection connection, String table, String ddl) throws SQLException {
        try {
            return work.run();
        } catch (SQLException e) {
            if (e.getErrorCode() != ER_BAD_FIELD_ERROR) {
                throw e;
            }
            List<String> missing = missing(connection, table, ddl);
            if (missing.isEmpty()) {
                throw e;
            }
            throw new SQLException("The jobs table '" + table + "' lacks columns this version needs (it was created by"
                    + " an earlier build of the extension): " + String.join(", ", missing.stream()
                            .map(definition -> definition.substring(0, definition.indexOf(' '))).toList())
                    + ". The jobs that need them do not run until they are added as the shipped DDL (" + JobTable.DDL_RESOURCE
                    + ") has them"
                    + " (a migration that creates the table if it does not exist leaves it as it is): ALTER TABLE " + table
                    + " ADD COLUMN " + String.join(", ADD COLUMN ", missing), e.getSQLState(), e.getErrorCode(), e);
        }
    }

    /** The shipped DDL's definitions of the columns {@code table} lacks, in its order. */
    static List<String> missing(Connection connection, String table, String ddl) throws SQLException {
        int dot = table.indexOf('.');
        Set<String> present = new HashSet<>();
        try (PreparedStatement columns = connection.prepareStatement("SELECT COLUMN_NAME FROM information_schema.COLUMNS"
                + " WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?")) {
            columns.setString(1, dot < 0 ? null : table.substring(0, dot));
            columns.setString(2, table.substring(dot + 1));
            try (ResultSet rs = columns.executeQuery()) {
                while (rs.next()) {
                    present.add(rs.getString(1).toLowerCase(Locale.ROOT));
                }
            }
        }
        List<String> missing = new ArrayList<>();
        if (present.isEmpty()) {
            return missing; // columns this user cannot see, or a name the lookup does not match: nothing to say
        }
        Matcher column = COLUMN.matcher(ddl);
        while (column.find()) {
            if (!present.contains(column.group(1))) {
                missing.add(column.group(1) + " " + column.group(2));
            }
        }
        return missing;
    }
}
