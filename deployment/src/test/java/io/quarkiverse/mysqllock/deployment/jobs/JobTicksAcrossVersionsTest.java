package io.quarkiverse.mysqllock.deployment.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.Ticks;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A fleet mid-way through a rolling upgrade from a version that claims ticks in the lock table's tick rows, or rolled
 * back to one: instances of both versions fire the same ticks, and no tick runs twice. The older version is its claim
 * logic as it shipped ({@link OlderVersionTicks}), run by "instances" with connections of their own.
 */
class JobTicksAcrossVersionsTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Job.class, Ticks.class, OlderVersionTicks.class);

    @Inject
    Job job;

    /**
     * Two instances of each version fire every tick (and every fifth tick once more, a second late, as a loaded
     * scheduler does): each tick runs exactly once, on one of them. In most rounds all fire at the same moment, and
     * which version wins is a race; in every third round one version fires first and the other only once it is done,
     * so that each version is known to run ticks the other then fires late.
     */
    @Test
    void aFleetOfBothVersionsRunsEachTickOnce() throws Exception {
        Map<Long, List<String>> runs = new ConcurrentHashMap<>();
        Map<Long, String> firstVersion = new TreeMap<>();
        try (Connection older1 = TestDatabase.shared().connect(); Connection older2 = TestDatabase.shared().connect()) {
            List<OlderVersionTicks> olders = List.of(new OlderVersionTicks(older1), new OlderVersionTicks(older2));
            for (int second = 1; second <= 60; second++) {
                long tick = 1_000_000L + second * 1000L;
                List<Fire> olderFires = List.of(new Fire(tick, "older instance-0", olders.get(0)),
                        new Fire(tick, "older instance-1", olders.get(1)));
                List<Fire> newerFires = new ArrayList<>(List.of(new Fire(tick, "newer instance-2", null),
                        new Fire(tick, "newer instance-3", null)));
                if (second % 5 == 0) {
                    // a late fire of the tick before, after this one was fired
                    newerFires.add(new Fire(tick - 1000, "newer instance-4", null));
                }
                switch (second % 3) {
                    case 1 -> {
                        firstVersion.put(tick, "newer");
                        fireTogether(newerFires, runs);
                        fireTogether(olderFires, runs);
                    }
                    case 2 -> {
                        firstVersion.put(tick, "older");
                        fireTogether(olderFires, runs);
                        fireTogether(newerFires, runs);
                    }
                    default -> {
                        List<Fire> all = new ArrayList<>(olderFires);
                        all.addAll(newerFires);
                        fireTogether(all, runs);
                    }
                }
            }
        }
        Map<Long, List<String>> sorted = new TreeMap<>(runs);
        assertThat(sorted.entrySet()).as("ticks and who ran them").allSatisfy(ran -> assertThat(ran.getValue())
                .as("the instances that ran tick " + ran.getKey()).hasSize(1));
        assertThat(sorted).as("every tick ran").hasSize(60);
        assertThat(firstVersion).as("a version that fired a tick first ran it").allSatisfy(
                (tick, version) -> assertThat(sorted.get(tick).get(0)).as("tick " + tick).startsWith(version));
    }

    /** One instance's fire of one tick: an instance of the older version when {@code older} is set. */
    private record Fire(long tick, String who, OlderVersionTicks older) {
    }

    /** The fires given, each by an instance of its own, all at the same moment; returns when all are done. */
    private void fireTogether(List<Fire> fires, Map<Long, List<String>> runs) throws Exception {
        CyclicBarrier together = new CyclicBarrier(fires.size());
        List<CompletableFuture<Void>> running = new ArrayList<>();
        for (Fire fire : fires) {
            running.add(Background.run(() -> {
                try {
                    together.await(30, TimeUnit.SECONDS);
                    if (fire.older() != null) {
                        fire.older().fire("versions:fleet", fire.tick(), () -> ran(runs, fire.tick(), fire.who()));
                    } else {
                        job.fleet(Ticks.at(fire.tick()), fire.who(), runs);
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        CompletableFuture.allOf(running.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
    }

    /**
     * The first deploy of the new version: what the older instances ran does not run again, a late tick that ran nowhere
     * runs once (the rule of both versions), and the next tick runs.
     */
    @Test
    void anUpgradeRunsNoTickTheOlderVersionRan() throws Exception {
        List<String> runs = new CopyOnWriteArrayList<>();
        try (Connection connection = TestDatabase.shared().connect()) {
            OlderVersionTicks older = new OlderVersionTicks(connection);
            for (long tick : new long[] { 10_000, 11_000, 12_000 }) {
                assertThat(older.fire("versions:upgrade", tick, () -> runs.add("older@" + tick))).isTrue();
            }
        }
        for (long tick : new long[] { 11_000, 12_000, 11_500, 13_000, 12_000 }) {
            job.upgrade(Ticks.at(tick), runs);
        }
        assertThat(runs).containsExactly("older@10000", "older@11000", "older@12000", "newer@11500", "newer@13000");
    }

    /** A rollback: the older version runs no tick the newer one ran, and runs the ones it did not. */
    @Test
    void aRollbackRunsNoTickTheNewerVersionRan() throws Exception {
        List<String> runs = new CopyOnWriteArrayList<>();
        for (long tick : new long[] { 20_000, 21_000, 22_000 }) {
            job.rollback(Ticks.at(tick), runs);
        }
        try (Connection connection = TestDatabase.shared().connect()) {
            OlderVersionTicks older = new OlderVersionTicks(connection);
            for (long tick : new long[] { 21_000, 22_000, 21_500, 23_000, 22_000 }) {
                older.fire("versions:rollback", tick, () -> runs.add("older@" + tick));
            }
        }
        assertThat(runs).containsExactly("newer@20000", "newer@21000", "newer@22000", "older@21500", "older@23000");
    }

    private static void ran(Map<Long, List<String>> runs, long tick, String who) {
        runs.computeIfAbsent(tick, ignored -> new CopyOnWriteArrayList<>()).add(who);
    }

    @ApplicationScoped
    public static class Job {

        /** The lock waits as long as the older version's, so that no tick is skipped for a busy lock. */
        @Locked(value = "versions:fleet", onBusy = OnBusy.SKIP, waitFor = "30s")
        public void fleet(ScheduledExecution execution, String who, Map<Long, List<String>> runs) {
            ran(runs, execution.getScheduledFireTime().toEpochMilli(), who);
        }

        @Locked(value = "versions:upgrade", onBusy = OnBusy.SKIP)
        public void upgrade(ScheduledExecution execution, List<String> runs) {
            runs.add("newer@" + execution.getScheduledFireTime().toEpochMilli());
        }

        @Locked(value = "versions:rollback", onBusy = OnBusy.SKIP)
        public void rollback(ScheduledExecution execution, List<String> runs) {
            runs.add("newer@" + execution.getScheduledFireTime().toEpochMilli());
        }
    }
}
