package io.quarkiverse.mysqllock.deployment.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.SQLException;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.runtime.table.JobClaim;
import io.quarkiverse.mysqllock.runtime.table.JobTable;
import io.quarkiverse.mysqllock.runtime.table.LockTable;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * A jobs table created by an earlier build lacks the columns added since: the claim of a tick says which, with the
 * {@code ALTER TABLE} that adds them, and works once it ran.
 */
class JobTableColumnsTest {

    static final String LOCKS = "columns_old";

    @Test
    void aTableWithoutTheNewerColumnsSaysHowToAddThem() throws Exception {
        TestDatabase db = TestDatabase.shared();
        LockTable locks = new LockTable(LOCKS, true);
        JobTable jobs = new JobTable(locks);
        db.execute("DROP TABLE IF EXISTS " + jobs.name());
        db.execute("DROP TABLE IF EXISTS " + LOCKS);
        db.execute(locks.ddl());
        db.execute(jobs.ddl());
        // as the build before missed ticks created it
        db.execute("ALTER TABLE " + jobs.name() + " DROP COLUMN fired_tick, DROP COLUMN catch_up_from,"
                + " DROP COLUMN catch_up_to, DROP COLUMN next_catch_up_from, DROP COLUMN next_catch_up_to,"
                + " ADD COLUMN run_now_requested BIGINT NOT NULL DEFAULT 0");
        try (Connection connection = db.connect()) {
            jobs.seed(connection, "old:job", "old:job", "tick@old:job");
            assertThatThrownBy(() -> jobs.claim(connection, "old:job", 1_000, 0, 0, null))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("The jobs table '" + jobs.name() + "' lacks columns this version needs")
                    .hasMessageContaining("fired_tick, catch_up_from, catch_up_to, next_catch_up_from, next_catch_up_to")
                    .hasMessageContaining("ALTER TABLE " + jobs.name() + " ADD COLUMN fired_tick BIGINT NOT NULL"
                            + " DEFAULT 0, ADD COLUMN catch_up_from BIGINT NOT NULL DEFAULT 0, ADD COLUMN catch_up_to"
                            + " BIGINT NOT NULL DEFAULT 0");
            String message = catchMessage(() -> jobs.claim(connection, "old:job", 1_000, 0, 0, null));
            db.execute(message.substring(message.indexOf("ALTER TABLE")));
            assertThat(jobs.claim(connection, "old:job", 1_000, 0, 0, null).kind())
                    .as("the table altered as it said: the tick is claimed").isEqualTo(JobClaim.Kind.RUN);
        } finally {
            db.execute("DROP TABLE IF EXISTS " + jobs.name());
            db.execute("DROP TABLE IF EXISTS " + LOCKS);
        }
    }

    private static String catchMessage(org.assertj.core.api.ThrowableAssert.ThrowingCallable call) {
        try {
            call.call();
        } catch (Throwable e) {
            return e.getMessage();
        }
        throw new AssertionError("no failure");
    }
}
