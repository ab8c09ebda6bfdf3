package io.quarkiverse.mysqllock.deployment.transaction;

import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkus.test.QuarkusUnitTest;

/** The commit inside the lock with in-memory locks (the data in the test database all the same). */
class InMemoryCommitInsideLockTest extends CommitInsideLockContract {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(CommitInsideLockContract.class, Ledger.class, Inner.class)
            .overrideConfigKey("quarkus.mysql-lock.in-memory", "true");
}
