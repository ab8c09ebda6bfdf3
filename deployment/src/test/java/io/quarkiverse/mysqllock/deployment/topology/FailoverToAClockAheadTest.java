package io.quarkiverse.mysqllock.deployment.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockLostException.Reason;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.runtime.engine.PeriodicWork;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.GaleraCluster;
import io.quarkiverse.mysqllock.test.ReplicatedServers;
import io.quarkiverse.mysqllock.test.ReplicatedServers.Durability;
import io.quarkiverse.mysqllock.test.TcpProxy;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.runtime.BlockingOperationControl;
import io.quarkus.runtime.IOThreadDetector;

/**
 * A failover to a replica whose clock runs ahead of the primary's (libfaketime; the lease's row replicated before the
 * primary dies): every lease row the promoted server holds was written by the old primary's clock, and by the new one's
 * it ends early.
 * <ul>
 * <li>4 s ahead: under expiry by the server's clock, the lease of a holder that stopped renewing as the primary died
 * was granted again there about 11 s after its last renewal, while its holder counted on it for 14.55 s; with observed
 * expiry the promoted server grants no lease its holder renews, and a stalled holder's only after the holder was
 * told.</li>
 * <li>10 minutes ahead, within the default max-clock-skew (15 minutes): every membership the old primary wrote ended
 * minutes ago by the new one's clock; the holder's membership renewal finds it so, the holder is told
 * ({@code MEMBERSHIP_LOST}) and lets its leases go, and only then does another instance get the lock.</li>
 * </ul>
 */
class FailoverToAClockAheadTest {

    static final Duration AHEAD = Duration.ofSeconds(4);
    static final Duration MINUTES_AHEAD = Duration.ofMinutes(10);
    static final Duration TTL = Duration.ofSeconds(15);
    static ReplicatedServers secondsAhead;
    static ReplicatedServers minutesAhead;

    @BeforeAll
    static void startPairs() {
        // libfaketime comes with Galera's Debian packages
        GaleraCluster.assumeAvailable("A failover to a server whose clock runs ahead");
        BlockingOperationControl.setIoThreadDetector(new IOThreadDetector[0]);
        secondsAhead = ReplicatedServers.start(Durability.ASYNC, AHEAD);
        minutesAhead = ReplicatedServers.start(Durability.ASYNC, MINUTES_AHEAD);
    }

    @AfterAll
    static void stopPairs() {
        for (ReplicatedServers servers : new ReplicatedServers[] { secondsAhead, minutesAhead }) {
            if (servers != null) {
                servers.close();
            }
        }
    }

    @Test
    void secondsAheadThePromotedServerGrantsNoLeaseItsHolderRenewsAndAStalledOneOnlyOnceItsHolderWasTold() throws Exception {
        TestDatabase primary = secondsAhead.primary();
        try (TcpProxy renewingLink = TcpProxy.start("renewing", primary.port());
                TcpProxy stalledLink = TcpProxy.start("stalled", primary.port());
                TcpProxy takerLink = TcpProxy.start("taker", primary.port());
                StandaloneLocks renewing = lease("clock-renewing", primary.via(renewingLink)).start();
                StandaloneLocks stalled = lease("clock-stalled", primary.via(stalledLink)).start();
                StandaloneLocks taker = lease("clock-taker", primary.via(takerLink)).start()) {
            LockHandle renewed = renewing.locks.acquire("promoted:renewed", Duration.ZERO);
            LockHandle stopped = stalled.locks.acquire("promoted:stalled", Duration.ZERO);
            long fence = stopped.fencingToken();
            CompletableFuture<Long> toldAt = new CompletableFuture<>();
            stopped.onLost(lost -> toldAt.complete(System.nanoTime()));
            TestDatabase replica = secondsAhead.replica();
            LockApp.await("the lease rows on the replica", Duration.ofSeconds(30), () -> replica.queryLong(
                    "SELECT COUNT(*) FROM mysql_lock WHERE name IN ('promoted:renewed', 'promoted:stalled')") == 2);

            // one holder stops renewing just before the primary dies: its row, as the promoted server has it, was
            // written by the old primary's clock and ends 4 s early by the new one's
            PeriodicWork renewals = stalled.locks.engine().periodicWork();
            renewals.pause(true);
            try {
                TestDatabase promoted = secondsAhead.failOver();
                for (TcpProxy link : List.of(renewingLink, stalledLink, takerLink)) {
                    link.retarget(promoted.port());
                }
                long aheadMillis = promoted.queryLong("SELECT ROUND(UNIX_TIMESTAMP(UTC_TIMESTAMP(6)) * 1000)")
                        - System.currentTimeMillis();
                assertThat(aheadMillis).as("the promoted server's clock ahead").isBetween(AHEAD.toMillis() - 1000,
                        AHEAD.toMillis() + 1000);
                CompletableFuture<Long> grantedAt = Background.supply(() -> {
                    LockHandle next = taker.locks.acquire("promoted:stalled", TTL.multipliedBy(3));
                    long at = System.nanoTime();
                    assertThat(next.fencingToken()).isGreaterThan(fence);
                    next.release();
                    return at;
                });

                // two renewal intervals and more: the other holder renews on the promoted server, the taker never
                // takes its lease
                long until = System.nanoTime() + TTL.dividedBy(3).multipliedBy(2).plusSeconds(2).toNanos();
                int tries = 0;
                while (System.nanoTime() - until < 0) {
                    assertThat(taker.locks.tryAcquire("promoted:renewed")).as("a lease its holder renews").isEmpty();
                    tries++;
                    TimeUnit.MILLISECONDS.sleep(100);
                }
                assertThat(tries).isGreaterThan(10);
                LockApp.await("a renewal on the promoted server", Duration.ofSeconds(30), () -> promoted.queryLong(
                        "SELECT COUNT(*) FROM mysql_lock WHERE name = 'promoted:renewed'"
                                + " AND expires_at > UTC_TIMESTAMP(6) + INTERVAL 5 SECOND") == 1);
                assertThat(renewed.isValid()).as("the renewing holder kept its lease through the failover").isTrue();

                // the stalled holder is told by its own clock, and only then does the promoted server grant its lease
                long granted = grantedAt.get(TTL.multipliedBy(4).toMillis(), TimeUnit.MILLISECONDS);
                assertThat(toldAt).as("the stalled holder was told before the promoted server granted its lease")
                        .isCompleted();
                assertThat(toldAt.get()).isLessThan(granted);
            } finally {
                renewals.pause(false);
            }
            stopped.release();
            renewed.release();
        }
    }

    @Test
    void minutesAheadItsHolderIsToldMembershipLostBeforeThePromotedServerGrantsItsLease() throws Exception {
        TestDatabase primary = minutesAhead.primary();
        try (TcpProxy holderLink = TcpProxy.start("holder", primary.port());
                TcpProxy takerLink = TcpProxy.start("taker", primary.port());
                StandaloneLocks holder = lease("minutes-holder", primary.via(holderLink)).start();
                StandaloneLocks taker = lease("minutes-taker", primary.via(takerLink)).start()) {
            LockHandle held = holder.locks.acquire("minutes:held", Duration.ZERO);
            long fence = held.fencingToken();
            CompletableFuture<LockLostException> told = new CompletableFuture<>();
            CompletableFuture<Long> toldAt = new CompletableFuture<>();
            held.onLost(lost -> {
                toldAt.complete(System.nanoTime());
                told.complete(lost);
            });
            TestDatabase replica = minutesAhead.replica();
            LockApp.await("the lease row on the replica", Duration.ofSeconds(30),
                    () -> replica.queryLong("SELECT COUNT(*) FROM mysql_lock WHERE name = 'minutes:held'") == 1);

            TestDatabase promoted = minutesAhead.failOver();
            holderLink.retarget(promoted.port());
            takerLink.retarget(promoted.port());
            long aheadMillis = promoted.queryLong("SELECT ROUND(UNIX_TIMESTAMP(UTC_TIMESTAMP(6)) * 1000)")
                    - System.currentTimeMillis();
            assertThat(aheadMillis).as("the promoted server's clock ahead").isBetween(MINUTES_AHEAD.toMillis() - 5000,
                    MINUTES_AHEAD.toMillis() + 5000);

            // the taker tries again and again; whenever it gets the lock, its holder must have been told before
            LockHandle next = null;
            long grantedAt = 0;
            long deadline = System.nanoTime() + TTL.multipliedBy(4).toNanos();
            while (next == null && System.nanoTime() - deadline < 0) {
                Optional<LockHandle> got = taker.locks.tryAcquire("minutes:held");
                if (got.isPresent()) {
                    grantedAt = System.nanoTime();
                    next = got.get();
                } else {
                    TimeUnit.MILLISECONDS.sleep(100);
                }
            }
            assertThat(next).as("the lock, once its holder let it go").isNotNull();
            assertThat(toldAt).as("the holder was told before the promoted server granted its lease").isCompleted();
            assertThat(toldAt.get()).isLessThan(grantedAt);
            assertThat(told.get().reason()).isEqualTo(Reason.MEMBERSHIP_LOST);
            assertThat(held.isValid()).isFalse();
            assertThat(next.fencingToken()).isGreaterThan(fence);
            next.release();
            held.release();
        }
    }

    static StandaloneLocks.Settings lease(String id, TestDatabase server) {
        return StandaloneLocks.Settings.of(id).mode(Mode.LEASE).on(server).ttl(TTL);
    }
}
