package io.quarkiverse.mysqllock.deployment.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.runtime.table.JobTable;
import io.quarkiverse.mysqllock.runtime.table.LockTable;

class LockTableDdlTest {

    @Test
    void theShippedDdlIsWhatTheExtensionRunsWithTheConfiguredName() {
        assertThat(new LockTable("mysql_lock", true).ddl()).startsWith("CREATE TABLE IF NOT EXISTS mysql_lock (")
                .contains("fence BIGINT NOT NULL DEFAULT 0").doesNotContain("--").doesNotEndWith(";");
        assertThat(new LockTable("app.locks", true).ddl()).startsWith("CREATE TABLE IF NOT EXISTS app.locks (");
        assertThat(new JobTable(new LockTable("mysql_lock", true)).ddl())
                .startsWith("CREATE TABLE IF NOT EXISTS mysql_lock_job (").contains("latest_tick BIGINT NOT NULL DEFAULT 0")
                .doesNotContain("--").doesNotEndWith(";");
        assertThat(new JobTable(new LockTable("app.locks", true)).ddl())
                .startsWith("CREATE TABLE IF NOT EXISTS app.locks_job (");
    }

    @Test
    void tableNamesAreIdentifiersOnly() {
        for (String bad : new String[] { "", "1table", "locks;drop", "a.b.c", "`x`", "t t", "x".repeat(65),
                "x".repeat(59), "app." + "x".repeat(59) }) {
            assertThatThrownBy(() -> new LockTable(bad, true)).as(bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("quarkus.mysql-lock.table");
        }
        assertThat(new LockTable("x".repeat(58), true).name()).as("room for the suffix of the jobs tables").hasSize(58);
        assertThat(new LockTable("s".repeat(64) + ".x", true).name()).as("a schema's name up to 64").hasSize(66);
    }
}
