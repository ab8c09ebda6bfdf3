package io.quarkiverse.mysqllock.deployment.table;

import static org.assertj.core.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StartupFailure;
import io.quarkiverse.mysqllock.runtime.table.LockTable;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A lock table altered so that it cannot hold a lease's version: an {@code owner} too narrow for the owner tokens (a
 * server in a non-strict SQL mode cuts a token short, and the length it records with it: watchers would count a shorter
 * lease) and an {@code expires_at} to the second (two renewals within a second would leave the same version, which a
 * watcher takes for a dead holder's). The application does not start, and says what to alter.
 */
class NarrowLockTableAtStartupTest {

    @RegisterExtension
    static final QuarkusUnitTest app = StartupFailure.expect(LockApp.app(StartupFailure.class)
            .setBeforeAllCustomizer(() -> {
                TestDatabase db = TestDatabase.shared();
                db.execute("DROP TABLE IF EXISTS narrow_lock");
                db.execute(new LockTable("narrow_lock", true).ddl());
                db.execute("ALTER TABLE narrow_lock MODIFY owner VARCHAR(40) NULL,"
                        + " MODIFY expires_at DATETIME NOT NULL DEFAULT '1970-01-01 00:00:00'");
            })
            .overrideConfigKey("quarkus.mysql-lock.table", "narrow_lock")
            .overrideConfigKey("quarkus.mysql-lock.mode", "lease"),
            "The lock table 'narrow_lock' cannot hold a lease's version",
            "owner is VARCHAR(40), its owner tokens need up to",
            "expires_at keeps 0 fractional digits, not 6",
            "ALTER TABLE narrow_lock MODIFY owner VARCHAR(255) NULL,"
                    + " MODIFY expires_at DATETIME(6) NOT NULL DEFAULT '1970-01-01 00:00:00.000000'");

    @Test
    void theApplicationDoesNotStart() {
        fail("the application started");
    }
}
