package io.quarkiverse.mysqllock.runtime.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;

import org.junit.jupiter.api.Test;

/**
 * The server errors the engines react to, by the codes MySQL and MariaDB send (fixed by the servers, so spelled out
 * here rather than taken from the constants under test).
 */
class SqlErrorsTest {

    private static SQLException error(int code, String state) {
        return new SQLException("error " + code, state, code);
    }

    /** {@code cause}, as a driver or a pool may wrap it: in a runtime exception, in an SQL exception of its own. */
    private static SQLException wrapped(SQLException cause) {
        return new SQLException("wrapper", "HY000", 0, new IllegalStateException("in between", cause));
    }

    @Test
    void deadlocksOfBothServers() {
        assertThat(SqlErrors.isDeadlock(error(1213, "40001"))).as("MariaDB, and InnoDB on both").isTrue();
        assertThat(SqlErrors.isDeadlock(error(3058, "HY000"))).as("MySQL's named-lock deadlock").isTrue();
        assertThat(SqlErrors.isDeadlock(error(1205, "HY000"))).isFalse();
    }

    @Test
    void theErrorsKnownByTheirCode() {
        assertThat(SqlErrors.isLockWaitTimeout(error(1205, "HY000"))).isTrue();
        assertThat(SqlErrors.isLockWaitTimeout(error(1213, "40001"))).isFalse();
        assertThat(SqlErrors.isDuplicateKey(error(1062, "23000"))).isTrue();
        assertThat(SqlErrors.isDuplicateKey(error(1146, "42S02"))).isFalse();
        assertThat(SqlErrors.isMissingTable(error(1146, "42S02"))).isTrue();
        assertThat(SqlErrors.isMissingTable(error(1305, "42000"))).isFalse();
        assertThat(SqlErrors.isMissingFunction(error(1305, "42000"))).isTrue();
        assertThat(SqlErrors.isMissingFunction(error(1062, "23000"))).isFalse();
    }

    @Test
    void aReadOnlyServerIsFoundAlsoUnderWrappers() {
        assertThat(SqlErrors.isReadOnly(error(1290, "HY000"))).as("--read-only, --super-read-only").isTrue();
        assertThat(SqlErrors.isReadOnly(error(1836, "HY000"))).as("InnoDB read-only mode").isTrue();
        assertThat(SqlErrors.isReadOnly(wrapped(error(1290, "HY000")))).isTrue();
        assertThat(SqlErrors.isReadOnly(wrapped(error(1213, "40001")))).isFalse();
        assertThat(SqlErrors.isReadOnly(new SQLException("no code"))).isFalse();
    }

    @Test
    void aConnectionFailureIsAnySqlStateOfClass08AlsoUnderWrappers() {
        assertThat(SqlErrors.isConnectionFailure(error(0, "08S01"))).as("communications link failure").isTrue();
        assertThat(SqlErrors.isConnectionFailure(error(0, "08003"))).as("connection closed").isTrue();
        assertThat(SqlErrors.isConnectionFailure(wrapped(error(0, "08S01")))).isTrue();
        assertThat(SqlErrors.isConnectionFailure(error(1213, "40001"))).isFalse();
        assertThat(SqlErrors.isConnectionFailure(error(0, "42000"))).isFalse();
        assertThat(SqlErrors.isConnectionFailure(new SQLException("no state"))).as("a null state").isFalse();
    }

    @Test
    void theDescriptionHasTheMessageTheCodeAndTheState() {
        assertThat(SqlErrors.describe(new SQLException("Deadlock found when trying to get lock", "40001", 1213)))
                .isEqualTo("Deadlock found when trying to get lock (error 1213, SQLSTATE 40001)");
        assertThat(SqlErrors.describe(new SQLException("no state"))).isEqualTo("no state (error 0, SQLSTATE null)");
    }
}
