package io.quarkiverse.mysqllock.deployment.transaction;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig;
import io.quarkiverse.mysqllock.test.Background;
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
        LATER_HOLDS.add(laterInstance().locks.acquire(name, Duration.ofSeconds(30)));
    }

    /**
     * A grant whose token waits for a previous holder's transaction that has not committed yet (its lock released and
     * checked inside it, then its session killed): busy once the acquisition's wait is over (at least the server's
     * 1 s), rather than failing after the server's 50 s row-lock wait.
     */
    @Test
    void aGrantWaitingForThePreviousHoldersCommitIsBusyWhenItsWaitEnds() throws Exception {
        String name = "fenced:committing";
        CountDownLatch checked = new CountDownLatch(1);
        CountDownLatch commit = new CountDownLatch(1);
        CompletableFuture<Void> holder = Background.run(() -> {
            try {
                accounts.releasesThenWaits(name, checked, commit);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        try {
            assertThat(checked.await(30, TimeUnit.SECONDS)).as("checked inside the transaction").isTrue();
            ServerState.update("KILL " + ServerState.holder(name).orElseThrow());
            StandaloneLocks next = laterInstance();
            long start = System.nanoTime();
            Optional<LockHandle> granted = next.locks.tryAcquire(name, Duration.ofSeconds(1));
            long millis = LockApp.millisSince(start);
            granted.ifPresent(LockHandle::release);
            assertThat(granted).as("a grant whose token waits for the holder's commit").isEmpty();
            assertThat(millis).as("ms until it was found busy").isLessThan(30_000);
        } finally {
            commit.countDown();
        }
        holder.get(60, TimeUnit.SECONDS);
    }

    private static StandaloneLocks laterInstance() {
        if (later == null) {
            later = StandaloneLocks.Settings.of("fenced-later").mode(MySqlLockRuntimeConfig.Mode.NAMED)
                    .fencedCommit(true).start();
        }
        return later;
    }

    @AfterAll
    static void stopTheLaterInstance() {
        LATER_HOLDS.forEach(LockHandle::release);
        if (later != null) {
            later.close();
        }
    }
}
