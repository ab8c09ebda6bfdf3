package io.quarkiverse.mysqllock.deployment.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
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
import io.quarkiverse.mysqllock.test.GaleraCluster;
import io.quarkiverse.mysqllock.test.ReplicatedServers;
import io.quarkiverse.mysqllock.test.ReplicatedServers.Durability;
import io.quarkiverse.mysqllock.test.TcpProxy;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.runtime.BlockingOperationControl;
import io.quarkus.runtime.IOThreadDetector;

/**
 * A failover to a replica whose clock runs 10 minutes ahead of the primary's (libfaketime), within the default
 * max-clock-skew (15 minutes). By the promoted server's clock every lease and membership the old primary wrote ended
 * minutes ago, yet no lease is taken over by that: the holder's membership renewal finds its membership ended there, the
 * holder is told ({@code MEMBERSHIP_LOST}) and lets its leases go, and only then does another instance get the lock.
 */
class FailoverToAClockMinutesAheadTest {

    static final Duration AHEAD = Duration.ofMinutes(10);
    static final Duration TTL = Duration.ofSeconds(15);
    static ReplicatedServers servers;

    @BeforeAll
    static void startPair() {
        // libfaketime comes with Galera's Debian packages
        GaleraCluster.assumeAvailable("A failover to a server whose clock runs minutes ahead");
        BlockingOperationControl.setIoThreadDetector(new IOThreadDetector[0]);
        servers = ReplicatedServers.start(Durability.ASYNC, AHEAD);
    }

    @AfterAll
    static void stopPair() {
        if (servers != null) {
            servers.close();
        }
    }

    @Test
    void theHolderIsToldBeforeThePromotedServerGrantsItsLease() throws Exception {
        TestDatabase primary = servers.primary();
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
            TestDatabase replica = servers.replica();
            LockApp.await("the lease row on the replica", Duration.ofSeconds(30),
                    () -> replica.queryLong("SELECT COUNT(*) FROM mysql_lock WHERE name = 'minutes:held'") == 1);

            TestDatabase promoted = servers.failOver();
            holderLink.retarget(promoted.port());
            takerLink.retarget(promoted.port());
            long aheadMillis = promoted.queryLong("SELECT ROUND(UNIX_TIMESTAMP(UTC_TIMESTAMP(6)) * 1000)")
                    - System.currentTimeMillis();
            assertThat(aheadMillis).as("the promoted server's clock ahead").isBetween(AHEAD.toMillis() - 5000,
                    AHEAD.toMillis() + 5000);

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
