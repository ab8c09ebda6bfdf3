package io.quarkiverse.mysqllock.deployment.lease;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.deployment.testing.OwnServer;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.test.Await;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TcpProxy;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * {@code forceRelease} ends another instance's lease, and this instance takes the name before the force-release's
 * answer is back (its own election's campaign did, in a CI run of {@code LeaderElectionTest}). The force-release must
 * end only the lease it ended on the server: before, it found this instance's new, valid lease in its registry and
 * reported it lost ("force-released"), and the election revoked a term that nobody had taken.
 */
class ForceReleaseEndsOnlyWhatItEndedTest {

    @RegisterExtension
    static final OwnServer server = new OwnServer();

    @Test
    void aLeaseTakenWhileTheForceReleaseAnswerIsOnItsWayIsNotEnded() throws Exception {
        TestDatabase db = server.db();
        try (TcpProxy proxy = TcpProxy.start("force-release", db.port());
                StandaloneLocks other = StandaloneLocks.Settings.of("force-other").on(db).mode(Mode.LEASE)
                        .ttl(Duration.ofSeconds(10)).start();
                StandaloneLocks here = StandaloneLocks.Settings.of("force-here").on(db.via(proxy)).mode(Mode.LEASE)
                        .ttl(Duration.ofSeconds(10)).start()) {
            LockHandle theirs = other.locks.acquire("force:race", Duration.ZERO);
            CompletableFuture<Boolean> forced;
            // a transaction holds the lease's row: the force-release's UPDATE waits for it, and shows which session
            // sends it
            try (Connection blocker = db.connect(); Statement statement = blocker.createStatement()) {
                blocker.setAutoCommit(false);
                statement.executeQuery("SELECT fence FROM mysql_lock WHERE name = 'force:race' FOR UPDATE").close();
                forced = Background.supply(() -> here.locks.forceRelease("force:race"));
                Await.until("the force-release's UPDATE waiting for the row", Duration.ofSeconds(20),
                        () -> db.queryLong("SELECT COUNT(*) FROM information_schema.PROCESSLIST"
                                + " WHERE INFO LIKE 'UPDATE %owner = NULL%'") == 1);
                long session = db.queryLong("SELECT ID FROM information_schema.PROCESSLIST"
                        + " WHERE INFO LIKE 'UPDATE %owner = NULL%'");
                assertThat(proxy.stallAnswers(ServerState.clientPort(db, session))).isTrue();
                blocker.rollback();
            }
            try {
                // the UPDATE ran: the lease is ended on the server, and its answer is held back on its way
                Await.until("the lease ended on the server", Duration.ofSeconds(20),
                        () -> db.queryLong("SELECT COUNT(*) FROM mysql_lock WHERE name = 'force:race'"
                                + " AND owner IS NULL") == 1);
                Await.until("the answer held back", Duration.ofSeconds(20), () -> proxy.heldBack() > 0);
                assertThat(forced).isNotDone();

                Optional<LockHandle> mine = here.locks.tryAcquire("force:race", Duration.ZERO);
                assertThat(mine).as("this instance takes the name the force-release freed").isPresent();
                AtomicReference<LockLostException> told = new AtomicReference<>();
                mine.get().onLost(told::set);
                long fence = mine.get().fencingToken();

                proxy.resume();
                assertThat(forced.get(20, TimeUnit.SECONDS)).as("the force-release ended a lease").isTrue();
                assertThat(mine.get().isValid()).as("this instance's new lease, which the force-release did not end")
                        .isTrue();
                assertThat(told.get()).isNull();
                assertThat(db.queryLong("SELECT fence FROM mysql_lock WHERE name = 'force:race' AND owner IS NOT NULL"))
                        .as("still held on the server, by its fence").isEqualTo(fence);
                mine.get().release();
            } finally {
                proxy.resume();
            }
            Await.until("the other instance told", Duration.ofSeconds(20), () -> !theirs.isValid());
        }
    }
}
