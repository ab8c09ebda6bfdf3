package io.quarkiverse.mysqllock.deployment.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.runtime.table.LockTable;

class LockTableDdlTest {

    @Test
    void theShippedDdlIsWhatTheExtensionRunsWithTheConfiguredName() {
        assertThat(new LockTable("mysql_lock", true).ddl()).startsWith("CREATE TABLE IF NOT EXISTS mysql_lock (")
                .contains("fence BIGINT NOT NULL DEFAULT 0").doesNotContain("--").doesNotEndWith(";");
        assertThat(new LockTable("app.locks", true).ddl()).startsWith("CREATE TABLE IF NOT EXISTS app.locks (");
    }

    @Test
    void tableNamesAreIdentifiersOnly() {
        for (String bad : new String[] { "", "1table", "locks;drop", "a.b.c", "`x`", "t t", "x".repeat(65) }) {
            assertThatThrownBy(() -> new LockTable(bad, true)).as(bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("quarkus.mysql-lock.table");
        }
    }
}
