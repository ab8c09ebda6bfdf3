package io.quarkiverse.mysqllock.runtime.table;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;

import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlWork;

/**
 * A table of the extension created where it is missing, when it is first needed: the work that found it missing runs
 * again once it exists, or the error gives the DDL to run when creation is disabled.
 *
 * @param table the table's name, as configured
 * @param what what the table is, for the message ("jobs table")
 * @param ddl its DDL
 * @param create whether the extension creates its tables ({@code quarkus.mysql-lock.create-table})
 */
record MissingTable(String table, String what, String ddl, boolean create) {

    /** Runs {@code work}; if this table is missing, creates it (or explains how) and runs it again. */
    <T> T creating(Connection connection, SqlWork<T> work) throws SQLException {
        try {
            return work.run();
        } catch (SQLException e) {
            if (!SqlErrors.isMissingTable(e) || !names(e)) {
                throw e;
            }
            if (!create) {
                throw new IllegalStateException("The " + what + " '" + table + "' does not exist and"
                        + " quarkus.mysql-lock.create-table=false. Create it with:\n" + ddl, e);
            }
            try (Statement statement = connection.createStatement()) {
                statement.execute(ddl);
            }
            return work.run();
        }
    }

    /** Whether the server's "doesn't exist" message is about this table (and not another one of the extension's). */
    private boolean names(SQLException e) {
        // lower_case_table_names can report the name in lower case
        return String.valueOf(e.getMessage()).toLowerCase(Locale.ROOT)
                .contains(table.substring(table.indexOf('.') + 1).toLowerCase(Locale.ROOT) + "'");
    }
}
