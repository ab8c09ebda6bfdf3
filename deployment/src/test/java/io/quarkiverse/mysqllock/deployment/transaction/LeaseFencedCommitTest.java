package io.quarkiverse.mysqllock.deployment.transaction;

import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Fenced commits on the LEASE engine: another instance takes the lease over (its row's owner and fence change as a
 * take-over changes them) while the holder, whose lease has not ended by its own clock, still counts it valid: an
 * operator's {@code forceRelease} followed by another instance's take, or a clock that misjudged the lease's end.
 */
class LeaseFencedCommitTest extends FencedCommitContract {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(FencedCommitContract.class, Accounts.class, Writes.class)
            .overrideRuntimeConfigKey("quarkus.mysql-lock.mode", "lease")
            .overrideRuntimeConfigKey("quarkus.mysql-lock.fenced-commit", "true");

    @Override
    void grantToALaterHolder(String name) {
        ServerState.update("UPDATE mysql_lock SET owner = 'later/1/fenced#0000000000001/1', fence = fence + 1,"
                + " acquired_at = UTC_TIMESTAMP(6), expires_at = UTC_TIMESTAMP(6) + INTERVAL 30 SECOND WHERE name = ?",
                name);
    }
}
