package io.quarkiverse.mysqllock.runtime.jdbc;

import java.sql.SQLException;

/** A piece of JDBC work. */
@FunctionalInterface
public interface SqlWork<T> {
    T run() throws SQLException;
}
