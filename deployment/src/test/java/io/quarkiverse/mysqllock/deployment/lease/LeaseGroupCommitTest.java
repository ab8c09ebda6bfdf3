package io.quarkiverse.mysqllock.deployment.lease;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.ServerVersion;
import io.quarkiverse.mysqllock.runtime.table.LeaseStatements;
import io.quarkiverse.mysqllock.runtime.table.LeaseStatements.RowState;
import io.quarkiverse.mysqllock.runtime.table.LeaseStatements.TakeRequest;
import io.quarkiverse.mysqllock.runtime.table.LockTable;
import io.quarkiverse.mysqllock.runtime.table.OwnedLease;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/**
 * LEASE group commit: the takes and give-ups that threads of one instance ask for at the same moment go to the server
 * together, and every answer stays what a statement per operation would give.
 */
class LeaseGroupCommitTest {

    static final int THREADS = 16;

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Test
    void sixteenThreadsCostFewerStatementsThanTwoPerCycle() throws Exception {
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("group-commit").mode(Mode.LEASE)
                .table("group_commit_lock").ttl(Duration.ofSeconds(5)).start()) {
            // every name's row exists: a first take seeds it alone
            for (int t = 0; t < THREADS; t++) {
                instance.locks.acquire("gc:" + t, Duration.ZERO).release();
            }
            Map<String, Long> lastFence = new ConcurrentHashMap<>();
            AtomicLong cycles = new AtomicLong();
            AtomicInteger regressions = new AtomicInteger();
            CyclicBarrier start = new CyclicBarrier(THREADS);
            long before = questions();
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            List<CompletableFuture<Void>> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                String name = "gc:" + t;
                threads.add(Background.run(() -> {
                    try {
                        start.await();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                    while (System.nanoTime() - end < 0) {
                        try (LockHandle handle = instance.locks.acquire(name, Duration.ofSeconds(5))) {
                            long fence = handle.fencingToken();
                            Long previous = lastFence.put(name, fence);
                            if (previous != null && fence <= previous) {
                                regressions.incrementAndGet();
                            }
                        }
                        cycles.incrementAndGet();
                    }
                }));
            }
            CompletableFuture.allOf(threads.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            long statements = questions() - before;

            assertThat(cycles.get()).isGreaterThan(THREADS * 10L);
            assertThat(regressions.get()).as("fences that did not increase").isZero();
            // one take and one give-up per cycle without group commit, and more around them
            assertThat((double) statements / cycles.get()).as(statements + " statements for " + cycles + " cycles")
                    .isLessThan(1.5);
            assertThat(instance.locks.held()).isEmpty();
            for (int t = 0; t < THREADS; t++) {
                assertThat(ServerState.queryString("SELECT owner FROM group_commit_lock WHERE name = ?", "gc:" + t))
                        .isNull();
            }
        }
    }

    @Test
    void aBatchAnswersEveryNameAsItsOwnStatementWould() throws Exception {
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("group-commit-mixed").mode(Mode.LEASE)
                .table("group_commit_mixed").ttl(Duration.ofSeconds(5)).start();
                StandaloneLocks other = StandaloneLocks.Settings.of("group-commit-other").mode(Mode.LEASE)
                        .table("group_commit_mixed").ttl(Duration.ofSeconds(5)).start()) {
            List<LockHandle> heldElsewhere = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                heldElsewhere.add(other.locks.acquire("held:" + t, Duration.ZERO));
                instance.locks.acquire("free:" + t, Duration.ZERO).release();
            }
            AtomicInteger wrongAnswers = new AtomicInteger();
            AtomicInteger granted = new AtomicInteger();
            CyclicBarrier together = new CyclicBarrier(THREADS);
            List<CompletableFuture<Void>> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                threads.add(Background.run(() -> {
                    for (int round = 0; round < 50; round++) {
                        try {
                            together.await();
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                        // half the threads ask for a name held by the other instance, at the same moment as the others
                        String name = (thread + round) % 2 == 0 ? "held:" + thread : "free:" + thread;
                        var handle = instance.locks.tryAcquire(name);
                        if (handle.isPresent() != name.startsWith("free:")) {
                            wrongAnswers.incrementAndGet();
                        }
                        handle.ifPresent(h -> {
                            granted.incrementAndGet();
                            h.release();
                        });
                    }
                }));
            }
            CompletableFuture.allOf(threads.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
            assertThat(wrongAnswers.get()).isZero();
            assertThat(granted.get()).isEqualTo(THREADS * 50 / 2);
            heldElsewhere.forEach(LockHandle::release);
        }
    }

    /**
     * The batch statements themselves, on rows set up by hand: free, held by another, ended a second ago (taken only
     * as the version its taker watched), long dead, missing.
     */
    @Test
    void theBatchStatementsTellEachRowApart() throws Exception {
        LockTable table = new LockTable("group_commit_rows", true);
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("group-commit-rows").mode(Mode.LEASE)
                .table("group_commit_rows").start()) {
            instance.locks.acquire("setup", Duration.ZERO).release(); // the table exists
            ServerState.update("INSERT INTO group_commit_rows (name, owner, expires_at, fence) VALUES"
                    + " ('r:free', NULL, '1970-01-01', 4), ('r:held', 'someone#1', UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, 7),"
                    + " ('r:ended', 'someone#2', UTC_TIMESTAMP(6) - INTERVAL 1 SECOND, 9),"
                    + " ('r:watched', 'someone#3', UTC_TIMESTAMP(6) - INTERVAL 1 SECOND, 11),"
                    + " ('r:long-dead', 'someone#4', UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, 13)");
            long watchedEnd = ServerState.queryLong("SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', expires_at)"
                    + " FROM group_commit_rows WHERE name = 'r:watched'");
            ConnectionSource connections = new ConnectionSource(instance.dataSource, "group-commit-rows",
                    Duration.ofSeconds(1), Duration.ofSeconds(10), ServerVersion.Flavor.AUTO, null);
            LeaseStatements statements = new LeaseStatements(connections, table, TimeUnit.MINUTES.toMicros(15));
            try (Connection pooled = instance.dataSource.getConnection()) {
                Connection raw = ConnectionSource.raw(pooled);
                ServerVersion server = connections.server(raw);
                List<TakeRequest> takes = List.of(new TakeRequest("r:free", "me#1", 5_000_000),
                        new TakeRequest("r:held", "me#2", 5_000_000), new TakeRequest("r:ended", "me#3", 5_000_000),
                        new TakeRequest("r:watched", "me#7", 5_000_000), new TakeRequest("r:long-dead", "me#6", 5_000_000),
                        new TakeRequest("r:missing", "me#4", 5_000_000));
                Map<String, RowState> rows = statements.takeMany(raw, server, takes);
                assertThat(ownerAndFence(rows.get("r:free"))).isEqualTo("me#1 5");
                assertThat(ownerAndFence(rows.get("r:held"))).isEqualTo("someone#1 7");
                assertThat(ownerAndFence(rows.get("r:ended"))).as("ended by the clock, never watched").isEqualTo(
                        "someone#2 9");
                assertThat(rows.get("r:ended").expiresMicros()).isLessThan(rows.get("r:free").expiresMicros());
                assertThat(ownerAndFence(rows.get("r:watched"))).as("a batch takes no owned row").isEqualTo(
                        "someone#3 11");
                assertThat(ownerAndFence(rows.get("r:long-dead"))).isEqualTo("me#6 14");
                // the version watched long enough is taken by a take of its own, which names it
                assertThat(statements.take(raw, server, "r:watched", "me#5", 5_000_000_000L,
                        LeaseStatements.Expected.version("someone#3", watchedEnd - 1))).as("another version").isZero();
                assertThat(statements.take(raw, server, "r:watched", "me#5", 5_000_000_000L,
                        LeaseStatements.Expected.version("someone#3", watchedEnd))).isEqualTo(12);
                assertThat(rows).doesNotContainKey("r:missing");

                // r:watched was taken over meanwhile: the batch gives up only what is still ours
                ServerState
                        .update("UPDATE group_commit_rows SET owner = 'thief#1', fence = fence + 1 WHERE name = 'r:watched'");
                assertThat(statements.giveUpMany(raw, server, List.of(lease("r:free", "me#1"), lease("r:watched", "me#5"))))
                        .isEqualTo(1);
                assertThat(ServerState.queryString("SELECT owner FROM group_commit_rows WHERE name = 'r:watched'"))
                        .isEqualTo("thief#1");
                assertThat(ServerState.queryString("SELECT owner FROM group_commit_rows WHERE name = 'r:free'")).isNull();
            } finally {
                connections.close();
            }
        }
    }

    @Test
    void twoInstancesBatchingOnTheSameNamesNeverOverlapAndLoseNothing() throws Exception {
        try (StandaloneLocks first = StandaloneLocks.Settings.of("group-commit-a").mode(Mode.LEASE)
                .table("group_commit_shared").ttl(Duration.ofSeconds(5)).start();
                StandaloneLocks second = StandaloneLocks.Settings.of("group-commit-b").mode(Mode.LEASE)
                        .table("group_commit_shared").ttl(Duration.ofSeconds(5)).start()) {
            int names = 4;
            AtomicInteger[] inside = new AtomicInteger[names];
            long[] lastFence = new long[names];
            for (int i = 0; i < names; i++) {
                inside[i] = new AtomicInteger();
            }
            AtomicInteger overlaps = new AtomicInteger();
            AtomicInteger regressions = new AtomicInteger();
            AtomicInteger losses = new AtomicInteger();
            AtomicLong sections = new AtomicLong();
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            List<CompletableFuture<Void>> threads = new ArrayList<>();
            for (StandaloneLocks instance : List.of(first, second)) {
                for (int t = 0; t < 8; t++) {
                    int name = t % names;
                    threads.add(Background.run(() -> {
                        while (System.nanoTime() - end < 0) {
                            LockHandle handle = instance.locks.acquire("shared:" + name, Duration.ofSeconds(10));
                            handle.onLost(lost -> losses.incrementAndGet());
                            if (inside[name].incrementAndGet() != 1) {
                                overlaps.incrementAndGet();
                            }
                            synchronized (lastFence) {
                                if (handle.fencingToken() <= lastFence[name]) {
                                    regressions.incrementAndGet();
                                }
                                lastFence[name] = handle.fencingToken();
                            }
                            inside[name].decrementAndGet();
                            handle.release();
                            sections.incrementAndGet();
                        }
                    }));
                }
            }
            CompletableFuture.allOf(threads.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
            assertThat(sections.get()).isGreaterThan(100);
            assertThat(overlaps.get()).as("holders of one name at once").isZero();
            assertThat(regressions.get()).as("fences in acquisition order that did not grow").isZero();
            assertThat(losses.get()).as("losses reported (none happened)").isZero();
        }
    }

    @Test
    void aRowHeldByATransactionDelaysNoOtherLease() throws Exception {
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("group-commit-row-lock").mode(Mode.LEASE)
                .table("group_commit_row_lock").ttl(Duration.ofSeconds(5)).start()) {
            for (int t = 0; t < THREADS; t++) {
                instance.locks.acquire("free:" + t, Duration.ZERO).release();
            }
            LockHandle held = instance.locks.acquire("locked", Duration.ZERO);
            try (Connection blocker = TestDatabase.shared().connect()) {
                blocker.setAutoCommit(false);
                try (Statement statement = blocker.createStatement()) {
                    statement.executeQuery("SELECT fence FROM group_commit_row_lock WHERE name = 'locked' FOR UPDATE")
                            .close();
                }
                // its release waits for the row, alone; meanwhile 16 threads take and release other names
                CompletableFuture<Void> release = Background.run(held::release);
                AtomicLong cycles = new AtomicLong();
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
                List<CompletableFuture<Void>> threads = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    String name = "free:" + t;
                    threads.add(Background.run(() -> {
                        while (System.nanoTime() - end < 0) {
                            instance.locks.acquire(name, Duration.ofSeconds(5)).release();
                            cycles.incrementAndGet();
                        }
                    }));
                }
                CompletableFuture.allOf(threads.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
                assertThat(cycles.get()).as("leases taken and released while the row was held").isGreaterThan(THREADS);
                assertThat(release).as("the release of the held row waits for it").isNotDone();
                blocker.commit();
                release.get(30, TimeUnit.SECONDS);
            }
            assertThat(ServerState.queryString("SELECT owner FROM group_commit_row_lock WHERE name = 'locked'")).isNull();
        }
    }

    private static String ownerAndFence(RowState row) {
        return row.owner() + " " + row.fence();
    }

    private static OwnedLease lease(String serverName, String ownerToken) {
        return new OwnedLease() {
            @Override
            public String name() {
                return serverName;
            }

            @Override
            public String serverName() {
                return serverName;
            }

            @Override
            public String ownerToken() {
                return ownerToken;
            }
        };
    }

    private static long questions() throws SQLException {
        return Long.parseLong(ServerState.queryString(
                "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'QUESTIONS'"));
    }
}
