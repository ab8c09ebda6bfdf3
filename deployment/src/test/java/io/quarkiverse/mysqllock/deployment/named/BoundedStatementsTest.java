package io.quarkiverse.mysqllock.deployment.named;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TcpProxy;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Every statement of the NAMED engine has a time limit, and one bad session never delays the checks of the others: a
 * pinned connection that stops answering (a black hole that accepts and acknowledges but never answers) is abandoned
 * after statement-timeout, its holder told, while a KILL of another session is still reported within the keepalive.
 * (The keepalive ran its checks one after another with no network time-out: the first stalled session stopped loss
 * detection for every session.)
 */
class BoundedStatementsTest {

    static final Duration KEEPALIVE = Duration.ofMillis(300);
    /**
     * Long enough that the bounds below, which a busy machine must not exceed, stay well under it: a KILL whose report
     * waited for the stalled session's check, the defect, comes only when that check times out, about this much later.
     */
    static final Duration STATEMENT_TIMEOUT = Duration.ofSeconds(6);

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Test
    void aStalledSessionIsAbandonedAndDelaysNoOtherSessionsCheck() throws Exception {
        TestDatabase db = TestDatabase.startEmbedded().withPrivilegeChecks();
        try (TcpProxy proxy = TcpProxy.start("bounded", db.port());
                StandaloneLocks instance = StandaloneLocks.Settings.of("bounded").on(db.via(proxy)).mode(Mode.NAMED)
                        .sharedConnections(0).keepalive(KEEPALIVE).statementTimeout(STATEMENT_TIMEOUT).start()) {
            // two threads, each with a session of its own
            LockHandle stalled = Background.supply(() -> instance.locks.acquire("bounded:stalled", Duration.ZERO)).get();
            LockHandle killed = Background.supply(() -> instance.locks.acquire("bounded:killed", Duration.ZERO)).get();
            AtomicReference<LockLostException> stalledLoss = new AtomicReference<>();
            AtomicLong killedToldAt = new AtomicLong();
            stalled.onLost(stalledLoss::set);
            killed.onLost(e -> killedToldAt.compareAndSet(0, System.nanoTime()));

            long stalledSession = holder(db, "bounded:stalled");
            assertThat(proxy.stallConnection(ServerState.clientPort(db, stalledSession))).isTrue();
            long stalledAt = System.nanoTime();
            try {
                // let the keepalive reach the stalled session and block on it
                LockApp.await("a keepalive period or two", Duration.ofSeconds(30),
                        () -> System.nanoTime() - stalledAt > KEEPALIVE.multipliedBy(3).toNanos());
                long killedAt = System.nanoTime();
                db.kill(holder(db, "bounded:killed"));
                LockApp.await("the KILL to be reported", Duration.ofSeconds(30), () -> killedToldAt.get() != 0);
                assertThat(TimeUnit.NANOSECONDS.toMillis(killedToldAt.get() - killedAt))
                        .as("not behind the stalled session's check, which ends only at the statement timeout")
                        .isLessThan(STATEMENT_TIMEOUT.toMillis() / 2);

                LockApp.await("the stalled session to be abandoned", STATEMENT_TIMEOUT.plusSeconds(30),
                        () -> stalledLoss.get() != null);
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stalledAt))
                        .as("abandoned at the statement timeout")
                        .isLessThan(STATEMENT_TIMEOUT.plus(KEEPALIVE).toMillis() + 4000);
                assertThat(stalledLoss.get().reason()).isEqualTo(LockLostException.Reason.CONNECTION_LOST);
                assertThat(stalled.isValid()).isFalse();
            } finally {
                proxy.resume();
            }
            stalled.release();
            killed.release();
            // the stalled session ended when its connection was abandoned: the lock is free again on the server
            LockApp.await("the abandoned session's lock to be freed", Duration.ofSeconds(30),
                    () -> holder(db, "bounded:stalled") == 0);
            CompletableFuture<Boolean> again = Background.supply(() -> {
                try (LockHandle handle = instance.locks.acquire("bounded:stalled", Duration.ofSeconds(20))) {
                    return handle.isValid();
                }
            });
            assertThat(again.get(30, TimeUnit.SECONDS)).isTrue();
        } finally {
            db.stop();
        }
    }

    private static long holder(TestDatabase db, String name) {
        return db.queryLong("SELECT COALESCE(IS_USED_LOCK(?), 0)", name);
    }
}
