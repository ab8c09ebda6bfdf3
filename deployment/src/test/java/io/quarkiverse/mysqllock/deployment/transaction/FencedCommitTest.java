package io.quarkiverse.mysqllock.deployment.transaction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Fenced commits on the NAMED engine: the holder's session is killed (the server frees its locks at once) and another
 * instance is granted the lock before the holder, which has not noticed, commits.
 */
class FencedCommitTest extends FencedCommitContract {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(FencedCommitContract.class, Accounts.class, Writes.class)
            .overrideRuntimeConfigKey("quarkus.mysql-lock.mode", "named")
            .overrideRuntimeConfigKey("quarkus.mysql-lock.fenced-commit", "true");

    private static StandaloneLocks later;
    private static final List<LockHandle> LATER_HOLDS = new ArrayList<>();

    @Override
    void grantToALaterHolder(String name) throws Exception {
        ServerState.update("KILL " + ServerState.holder(name).orElseThrow());
        if (later == null) {
            later = StandaloneLocks.Settings.of("fenced-later").mode(MySqlLockRuntimeConfig.Mode.NAMED)
                    .fencedCommit(true).start();
        }
        LATER_HOLDS.add(later.locks.acquire(name, Duration.ofSeconds(30)));
    }

    @AfterAll
    static void stopTheLaterInstance() {
        LATER_HOLDS.forEach(LockHandle::release);
        if (later != null) {
            later.close();
        }
    }
}
