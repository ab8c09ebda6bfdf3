package io.quarkiverse.mysqllock.deployment.transaction;

import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkus.test.QuarkusUnitTest;

/** The commit inside the lock on the LEASE engine. */
class LeaseCommitInsideLockTest extends CommitInsideLockContract {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(CommitInsideLockContract.class, Ledger.class, Inner.class)
            .overrideRuntimeConfigKey("quarkus.mysql-lock.mode", "lease");
}
