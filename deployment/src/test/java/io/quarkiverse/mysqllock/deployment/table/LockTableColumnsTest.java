package io.quarkiverse.mysqllock.deployment.table;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.runtime.table.LockTable;
import io.quarkiverse.mysqllock.runtime.table.OwnerTokens;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * The columns a lease's version lives in, checked before the engine is chosen: the shipped table passes, in this schema
 * or named with it; every alteration that would let a watcher take a live lease is refused, saying what to alter.
 */
class LockTableColumnsTest {

    static final String TABLE = "columns_lock";
    /** The longest owner token of an identity of the longest kind. */
    static final int LONGEST = OwnerTokens.longest("x".repeat(200));

    static void verifyAltered(String alteration) throws Exception {
        TestDatabase db = TestDatabase.shared();
        db.execute("DROP TABLE IF EXISTS " + TABLE);
        db.execute(new LockTable(TABLE, true).ddl());
        if (alteration != null) {
            db.execute("ALTER TABLE " + TABLE + " " + alteration);
        }
        try (Connection connection = db.connect()) {
            new LockTable(TABLE, true).verify(connection, LONGEST);
        }
    }

    @Test
    void theShippedTablePassesAlsoNamedWithItsSchema() throws Exception {
        assertThatCode(() -> verifyAltered(null)).doesNotThrowAnyException();
        try (Connection connection = TestDatabase.shared().connect()) {
            String schema = ServerState.queryString("SELECT DATABASE()");
            assertThatCode(() -> new LockTable(schema + "." + TABLE, true).verify(connection, LONGEST))
                    .doesNotThrowAnyException();
            // not there yet, to be created: nothing to check
            assertThatCode(() -> new LockTable("columns_lock_to_come", true).verify(connection, LONGEST))
                    .doesNotThrowAnyException();
        }
    }

    @Test
    void aNarrowOwnerIsRefused() {
        assertThatThrownBy(() -> verifyAltered("MODIFY owner VARCHAR(100) NULL")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("owner is VARCHAR(100), its owner tokens need up to " + LONGEST)
                .hasMessageContaining("ALTER TABLE " + TABLE + " MODIFY owner VARCHAR(255) NULL");
    }

    @Test
    void anEndToTheSecondIsRefused() {
        assertThatThrownBy(() -> verifyAltered("MODIFY expires_at DATETIME NOT NULL DEFAULT '1970-01-01 00:00:00'"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("expires_at keeps 0 fractional digits, not 6");
    }

    @Test
    void aTimestampEndIsRefused() {
        assertThatThrownBy(() -> verifyAltered("MODIFY expires_at TIMESTAMP(6) NOT NULL DEFAULT '1970-01-02 00:00:00'"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("expires_at is TIMESTAMP, not DATETIME");
    }

    @Test
    void aMissingColumnIsRefused() {
        assertThatThrownBy(() -> verifyAltered("DROP COLUMN owner")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("it has no column owner");
    }
}
