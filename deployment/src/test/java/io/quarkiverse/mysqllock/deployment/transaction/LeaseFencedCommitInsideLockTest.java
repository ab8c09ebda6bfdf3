package io.quarkiverse.mysqllock.deployment.transaction;

import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkus.test.QuarkusUnitTest;

/** The commit inside the lock on the LEASE engine, with fenced commits: every check passes, nothing waits for itself. */
class LeaseFencedCommitInsideLockTest extends CommitInsideLockContract {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(CommitInsideLockContract.class, Ledger.class, Inner.class)
            .overrideRuntimeConfigKey("quarkus.mysql-lock.mode", "lease")
            .overrideRuntimeConfigKey("quarkus.mysql-lock.fenced-commit", "true");
}
