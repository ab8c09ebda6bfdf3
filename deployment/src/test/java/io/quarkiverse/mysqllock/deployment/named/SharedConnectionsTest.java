package io.quarkiverse.mysqllock.deployment.named;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.named.NamedLockEngine;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Locks granted at once share connections: several locks of several threads on one server session, with in-JVM
 * exclusion before the server (a session would grant its own lock again), release per lock, and loss per connection.
 * One shared connection here, so that every thread's attempt meets every other's on the same session.
 */
class SharedConnectionsTest {

    static final Duration KEEPALIVE = Duration.ofMillis(500);

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app()
            .overrideRuntimeConfigKey("quarkus.mysql-lock.named.shared-connections", "1")
            .overrideRuntimeConfigKey("quarkus.mysql-lock.named.keepalive-interval", "500ms");

    @Inject
    LockManager locks;

    @Inject
    MySqlLockManager manager;

    private NamedLockEngine engine() {
        return (NamedLockEngine) manager.engine();
    }

    @Test
    void aThousandLocksOfTwentyThreadsAreHeldOnOneConnection() throws Exception {
        int threads = 20;
        int perThread = 50;
        CountDownLatch allHeld = new CountDownLatch(threads);
        CountDownLatch release = new CountDownLatch(1);
        List<CompletableFuture<Void>> holders = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            holders.add(Background.run(() -> {
                List<LockHandle> handles = new ArrayList<>();
                for (int i = 0; i < perThread; i++) {
                    handles.add(locks.acquire("shared:many:" + thread + ":" + i, Duration.ofSeconds(10)));
                }
                allHeld.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                handles.forEach(LockHandle::release);
            }));
        }
        try {
            assertThat(allHeld.await(60, TimeUnit.SECONDS)).isTrue();
            assertThat(manager.held()).hasSize(threads * perThread);
            assertThat(engine().pinnedConnections()).isEqualTo(1);
            List<String> names = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                for (int i = 0; i < perThread; i++) {
                    names.add("shared:many:" + t + ":" + i);
                }
            }
            // The server agrees: every one of them is held, all by one session.
            assertThat(holdersOnServer(names)).hasSize(1).doesNotContain(0L);
        } finally {
            release.countDown();
            CompletableFuture.allOf(holders.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        }
        assertThat(holdersOnServer(List.of("shared:many:0:0", "shared:many:19:49"))).containsExactly(0L);
        LockApp.await("the idle shared connection to go back to the pool", Duration.ofSeconds(30),
                () -> engine().pinnedConnections() == 0);
    }

    @Test
    void anotherThreadIsRefusedHereBeforeTheServerWouldGrantTheSessionItsOwnLock() throws Exception {
        String me = Thread.currentThread().getName();
        try (LockHandle mine = locks.acquire("shared:exclusive", Duration.ZERO)) {
            assertThat(Background.supply(() -> locks.tryAcquire("shared:exclusive")).get()).isEmpty();
            CompletableFuture<Object> other = Background.supply(() -> {
                try {
                    return locks.acquire("shared:exclusive", Duration.ZERO);
                } catch (LockNotAcquiredException e) {
                    return e;
                }
            });
            assertThat(other.get()).isInstanceOfSatisfying(LockNotAcquiredException.class, e -> {
                assertThat(e.reason()).isEqualTo(LockNotAcquiredException.Reason.BUSY);
                assertThat(e.holder()).hasValueSatisfying(holder -> assertThat(holder).contains("thread '" + me + "'"));
            });
            // The owner thread nests onto its own hold.
            try (LockHandle nested = locks.acquire("shared:exclusive", Duration.ZERO)) {
                assertThat(nested.isValid()).isTrue();
            }
            assertThat(mine.isValid()).isTrue();
            assertThat(ServerState.holder("shared:exclusive")).isPresent();
        }
        assertThat(ServerState.holder("shared:exclusive")).isEmpty();
    }

    @Test
    void threadsRacingForOneNameOnOneSessionNeverHoldItTogether() throws Exception {
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger acquired = new AtomicInteger();
        List<CompletableFuture<Void>> racers = new ArrayList<>();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        for (int t = 0; t < 8; t++) {
            racers.add(Background.run(() -> {
                while (System.nanoTime() < until) {
                    Optional<LockHandle> handle = locks.tryAcquire("shared:race");
                    if (handle.isEmpty()) {
                        continue;
                    }
                    acquired.incrementAndGet();
                    if (inside.incrementAndGet() > 1) {
                        overlaps.incrementAndGet();
                    }
                    long end = System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(500); // the critical section's work
                    while (System.nanoTime() < end) {
                        Thread.onSpinWait();
                    }
                    inside.decrementAndGet();
                    handle.get().release();
                }
            }));
        }
        CompletableFuture.allOf(racers.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        assertThat(acquired.get()).isPositive();
        assertThat(overlaps.get()).isZero();
        assertThat(ServerState.holder("shared:race")).isEmpty();
    }

    @Test
    void aWaiterWaitsOnAConnectionOfItsOwnAndGetsTheLockWhenTheSharedHolderReleases() throws Exception {
        LockHandle held = locks.acquire("shared:handoff", Duration.ZERO);
        CompletableFuture<Boolean> waiter = Background.supply(() -> {
            try (LockHandle handle = locks.acquire("shared:handoff", Duration.ofSeconds(20))) {
                return handle.isValid();
            }
        });
        LockApp.await("the waiter to wait on the server", Duration.ofSeconds(10),
                () -> ServerState.waitingInGetLock() > 0);
        long waitingOn = ServerState.queryLong(
                "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT GET_LOCK(%' LIMIT 1");
        assertThat(waitingOn).isNotEqualTo(ServerState.holder("shared:handoff").orElseThrow());
        held.release();
        assertThat(waiter.get(20, TimeUnit.SECONDS)).isTrue();
        assertThat(ServerState.holder("shared:handoff")).isEmpty();
    }

    @Test
    void aKilledSharedConnectionIsReportedLostToEveryThreadWithALockOnIt() throws Exception {
        CopyOnWriteArrayList<LockLostException> lost = new CopyOnWriteArrayList<>();
        List<LockHandle> handles = new ArrayList<>();
        for (String name : List.of("shared:kill:a", "shared:kill:b")) {
            LockHandle handle = Background.supply(() -> locks.acquire(name, Duration.ZERO)).get();
            handle.onLost(lost::add);
            handles.add(handle);
        }
        long session = ServerState.holder("shared:kill:a").orElseThrow();
        assertThat(ServerState.holder("shared:kill:b")).contains(session);

        TestDatabase.shared().kill(session);
        LockApp.await("both losses to be reported", Duration.ofSeconds(30), () -> lost.size() == 2);
        assertThat(lost).extracting(LockLostException::lockName).containsExactlyInAnyOrder("shared:kill:a",
                "shared:kill:b");
        assertThat(lost).extracting(LockLostException::reason).containsOnly(LockLostException.Reason.CONNECTION_LOST);
        assertThat(handles).noneMatch(LockHandle::isValid);
        assertThatThrownBy(handles.get(0)::fencingToken).isInstanceOf(LockLostException.class);
        handles.forEach(LockHandle::release);

        // A new shared connection takes the next locks.
        try (LockHandle again = locks.acquire("shared:kill:a", Duration.ZERO)) {
            assertThat(ServerState.holder("shared:kill:a")).isPresent().get().isNotEqualTo(session);
        }
    }

    /** The distinct sessions holding the names, 0 standing for "free". */
    private static Set<Long> holdersOnServer(List<String> names) throws SQLException {
        Set<Long> holders = new HashSet<>();
        try (Connection connection = TestDatabase.shared().connect()) {
            for (int from = 0; from < names.size(); from += 100) {
                List<String> chunk = names.subList(from, Math.min(names.size(), from + 100));
                StringBuilder sql = new StringBuilder("SELECT 0");
                chunk.forEach(name -> sql.append(", IFNULL(IS_USED_LOCK(?), 0)"));
                try (PreparedStatement statement = connection.prepareStatement(sql.toString())) {
                    for (int i = 0; i < chunk.size(); i++) {
                        statement.setString(i + 1, chunk.get(i));
                    }
                    try (ResultSet rs = statement.executeQuery()) {
                        rs.next();
                        for (int i = 0; i < chunk.size(); i++) {
                            holders.add(rs.getLong(i + 2));
                        }
                    }
                }
            }
        }
        return holders;
    }
}
