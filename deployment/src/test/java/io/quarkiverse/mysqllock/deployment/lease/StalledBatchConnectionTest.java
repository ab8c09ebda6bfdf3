package io.quarkiverse.mysqllock.deployment.lease;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.deployment.testing.OwnServer;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.test.Await;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TcpProxy;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * The connection the LEASE engine keeps for its batched takes and releases stalls (the network stops answering on it,
 * the connection stays open): the batch on it gives up within statement-timeout, and the takes and releases that queued
 * behind it go alone, each on a connection of its own, within a moment. Before, every take and release of the
 * instance, even {@code tryAcquire(name, ZERO)}, waited for the stalled batch for about a minute (the server's row lock
 * wait plus statement-timeout: the kept connection's time limit).
 */
class StalledBatchConnectionTest {

    /**
     * Long enough for the queued take and release to go alone (each on a new connection through the proxy) within it on
     * a busy machine; what proves they did not wait for the stalled batch is that it is still stuck when they are done.
     */
    static final Duration STATEMENT_TIMEOUT = Duration.ofSeconds(6);

    @RegisterExtension
    static final OwnServer server = new OwnServer();

    @Test
    void takesAndReleasesQueuedBehindAStalledBatchGoAlone() throws Exception {
        TestDatabase db = server.db();
        // the rows exist already: each take below is one statement on the batch connection, none of a connection of its own
        try (StandaloneLocks seeding = StandaloneLocks.Settings.of("stall-seed").on(db).mode(Mode.LEASE).start()) {
            for (String name : List.of("stall:warm", "stall:first", "stall:queued")) {
                seeding.locks.acquire(name, Duration.ZERO).release();
            }
        }
        try (TcpProxy proxy = TcpProxy.start("stalled-batch", db.port());
                StandaloneLocks instance = StandaloneLocks.Settings.of("stall").on(db.via(proxy)).mode(Mode.LEASE)
                        .ttl(Duration.ofSeconds(10)).statementTimeout(STATEMENT_TIMEOUT).start()) {
            LockHandle warm;
            long batchSession;
            // the server's log of statements names the session that ran the take: the connection kept for batches
            db.execute("SET GLOBAL log_output = 'TABLE', general_log = 1");
            try {
                warm = instance.locks.acquire("stall:warm", Duration.ZERO);
                batchSession = db.queryLong("SELECT thread_id FROM mysql.general_log WHERE argument LIKE ?"
                        + " AND argument LIKE '%UPDATE %' AND argument NOT LIKE '%general_log%' ORDER BY event_time DESC LIMIT 1",
                        "%'stall:warm'%");
            } finally {
                db.execute("SET GLOBAL general_log = 0");
                db.execute("TRUNCATE TABLE mysql.general_log");
            }
            assertThat(proxy.stallConnection(ServerState.clientPort(db, batchSession))).isTrue();
            try {
                CompletableFuture<Optional<LockHandle>> first = Background
                        .supply(() -> instance.locks.tryAcquire("stall:first", Duration.ZERO));
                Await.until("the first take stuck on the stalled connection", Duration.ofSeconds(30),
                        () -> proxy.heldBack() > 0);
                long queuedAt = System.nanoTime();
                CompletableFuture<Optional<LockHandle>> queued = Background
                        .supply(() -> instance.locks.tryAcquire("stall:queued", Duration.ZERO));
                CompletableFuture<Void> release = Background.run(warm::release);

                // well within statement-timeout: they did not wait for the stalled batch
                Optional<LockHandle> second = queued.get(STATEMENT_TIMEOUT.toMillis() - 1000, TimeUnit.MILLISECONDS);
                release.get(STATEMENT_TIMEOUT.toMillis() - 1000, TimeUnit.MILLISECONDS);
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - queuedAt))
                        .isLessThan(STATEMENT_TIMEOUT.toMillis());
                assertThat(second).as("the queued take, alone").isPresent();
                assertThat(first.isDone()).as("the first take, still on the stalled connection").isFalse();

                // the stalled batch itself gives up within statement-timeout, then takes alone
                Optional<LockHandle> firstTaken = first.get(STATEMENT_TIMEOUT.multipliedBy(3).toMillis(),
                        TimeUnit.MILLISECONDS);
                assertThat(firstTaken).as("the first take, alone after its batch gave up").isPresent();
                second.get().release();
                firstTaken.get().release();
            } finally {
                proxy.resume();
            }
            assertThat(instance.locks.tryAcquire("stall:warm", Duration.ZERO)).as("released").isPresent()
                    .hasValueSatisfying(LockHandle::release);
        }
    }
}
