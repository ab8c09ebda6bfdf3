package io.quarkiverse.mysqllock.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.it.FaultSuite.Options;
import io.quarkiverse.mysqllock.it.FaultSuite.Result;

/**
 * A short run of the fault suite on both engines (about 100 s each with start-up; the rotation of fault kinds injects
 * each before any comes again): every kind of fault is injected at least once per engine, the application saturating
 * its pool and a rolling restart with other settings among them, and any violation fails the build.
 * {@code -Dfaults.ci.seconds} makes it longer.
 */
class FaultSuiteIT {

    @Test
    void bothEnginesSurviveEveryKindOfFault() throws Exception {
        survive(List.of(Scenario.NAMED, Scenario.LEASE), Long.getLong("faults.ci.seconds", 80), 8, 100);
    }

    /**
     * Leader election on both engines, three workers joining the elections of three roles: the leader SIGKILLed,
     * SIGSTOPped, its session killed, its network stalled, the database restarted, its application's pool saturated, a
     * worker restarted with another keepalive interval, ttl or hand-over. Never two leaders of overlapping terms
     * by their own check on LEASE, no fenced work of a replaced leader accepted after its successor's, every lost term
     * told, and a new leader within the bound after each fault.
     */
    @Test
    void leaderElectionSurvivesTheFaultsThatEndATerm() throws Exception {
        // a strict NAMED term begins two keepalive intervals after its grant: about one term per role every 2 s
        survive(List.of(Scenario.LEADER_NAMED, Scenario.LEADER_LEASE), Long.getLong("faults.ci.leader.seconds", 45), 1,
                5);
    }

    /**
     * A semaphore of 3 permits taken by 24 threads of 3 processes, on both engines, through the faults that take a
     * holder's permit: each permit is a lock of its own, so the checker's rules hold per permit (never two holders of
     * one permit, hence never more holders than permits), and every permit is taken again after each fault.
     */
    @Test
    void semaphoresSurviveTheFaultsThatTakeAPermit() throws Exception {
        survive(List.of(Scenario.SEMAPHORE_NAMED, Scenario.SEMAPHORE_LEASE),
                Long.getLong("faults.ci.semaphore.seconds", 45), 8, 100);
    }

    /**
     * A scheduled job every second on three workers, on both engines: workers killed, paused, their sessions killed and
     * their network stalled, every one down at once, the database restarted, the job paused, resumed and run now
     * between the faults through the admin resource. No tick run twice or lost, every catch-up and run-now once, no run
     * after a pause ({@link JobChecker}); each run a fenced section, judged as the others. The JVM run's only
     * ({@code -Dfaults.ci.scheduling=false} in the native run): the job's code is the same, and CI has no room for it
     * twice.
     */
    @Test
    void scheduledJobsRunEachTickOnceThroughTheFaults() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Boolean.parseBoolean(System.getProperty("faults.ci.scheduling",
                "true")), "the scheduling runs are the JVM run's (-Dfaults.ci.scheduling=false: the native run)");
        Options defaults = Options.fromSystemProperties();
        Options options = new Options(Duration.ofSeconds(Long.getLong("faults.ci.scheduling.seconds", 40)),
                List.of(Scenario.SCHEDULING_NAMED, Scenario.SCHEDULING_LEASE), 3, 1, defaults.names(), defaults.ttl(),
                defaults.keepalive(), report("-scheduling"), defaults.seed(), System.out);
        for (Result result : FaultSuite.run(options)) {
            String label = result.scenario().label;
            assertThat(result.violations()).as("%s violations", label).isEmpty();
            assertThat(((Map<?, ?>) result.figures().get("job runs, by kind")).containsKey("scheduled"))
                    .as("%s scheduled runs", label).isTrue();
            assertThat((Long) result.figures().get("ticks checked")).as("%s ticks checked", label).isGreaterThan(10);
        }
    }

    /**
     * Critical sections that write in a JTA transaction under the lock, with fenced commits, on both engines: holders
     * paused, killed, their sessions killed between their release and their commit. No commit lands after a later
     * holder was granted the lock, no update is lost ({@link TransactionChecker}). The JVM run's only
     * ({@code -Dfaults.ci.transactions=false}): CI has no room for it twice.
     */
    @Test
    void noTransactionCommitsOnceALaterHolderWasGranted() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Boolean.parseBoolean(System.getProperty("faults.ci.transactions",
                "true")), "the transaction runs are the JVM run's (-Dfaults.ci.transactions=false: the native run)");
        Options defaults = Options.fromSystemProperties();
        Options options = new Options(Duration.ofSeconds(Long.getLong("faults.ci.transactions.seconds", 25)),
                List.of(Scenario.TRANSACTIONS_NAMED, Scenario.TRANSACTIONS_LEASE), 3, 8, defaults.names(),
                defaults.ttl(), defaults.keepalive(), report("-transactions"), defaults.seed(), System.out);
        for (Result result : FaultSuite.run(options)) {
            String label = result.scenario().label;
            assertThat(result.violations()).as("%s violations", label).isEmpty();
            assertThat((Long) result.figures().get(TransactionChecker.STALE)).as("%s stale commits", label).isZero();
            assertThat((Long) result.figures().get("transactions committed")).as("%s commits", label)
                    .isGreaterThan(100);
        }
    }

    /**
     * The runs against server topologies (Galera nodes failing, database clocks skewed, a replica promoted) test how the
     * LEASE engine meets the servers; the native run of these tests ({@code -Dfaults.ci.topologies=false}) leaves them to
     * the JVM run of the same build: the engine's code is the same, and CI's 45 minutes have no room for them twice.
     */
    private static void assumeTopologyRuns() {
        org.junit.jupiter.api.Assumptions.assumeTrue(Boolean.parseBoolean(System.getProperty("faults.ci.topologies",
                "true")), "the topology runs are the JVM run's (-Dfaults.ci.topologies=false: the native run)");
    }

    /** Where a run writes its report: target/fault-suite-ci, or -Dfaults.ci.directory (the native run's). */
    private static Path report(String suffix) {
        return Path.of(System.getProperty("faults.ci.directory", "target/fault-suite-ci") + suffix);
    }

    /**
     * Runs the scenarios on one server each, 3 workers of {@code threads} threads: no violation, more than
     * {@code minWrites} accepted writes (critical sections that did their work), every kind of fault injected.
     */
    private static void survive(List<Scenario> scenarios, long seconds, int threads, long minWrites) throws Exception {
        Options defaults = Options.fromSystemProperties();
        Options options = new Options(Duration.ofSeconds(seconds), scenarios, 3, threads, defaults.names(),
                defaults.ttl(), defaults.keepalive(), report(""), defaults.seed(), System.out);
        for (Result result : FaultSuite.run(options)) {
            String label = result.scenario().label;
            assertThat(result.violations()).as("%s violations", label).isEmpty();
            assertThat((Long) result.figures().get("accepted writes")).as("%s accepted writes", label)
                    .isGreaterThan(minWrites);
            assertThat((Map<?, ?>) result.figures().get("faults injected")).as("%s fault kinds", label)
                    .hasSize(result.scenario().kinds().size());
        }
    }

    /**
     * The LEASE engine on a 3-node Galera cluster, each worker on a node of its own: a node killed and restarted, a
     * node partitioned from the others and healed, a worker's network cut. Skipped where Galera cannot be installed,
     * except in CI.
     */
    @Test
    void theLeaseEngineKeepsItsGuaranteesOnAGaleraClusterWhoseNodesFail() throws Exception {
        assumeTopologyRuns();
        io.quarkiverse.mysqllock.test.GaleraCluster.assumeAvailable("Galera fault run");
        Options defaults = Options.fromSystemProperties();
        Options options = new Options(Duration.ofSeconds(Long.getLong("faults.ci.galera-seconds", 45)),
                List.of(Scenario.GALERA), 3, 8, defaults.names(), defaults.ttl(), defaults.keepalive(),
                report("-galera"), defaults.seed(), System.out);

        Result result = FaultSuite.run(options).get(0);

        assertThat(result.violations()).as("Galera violations").isEmpty();
        assertThat((Long) result.figures().get("accepted writes")).as("Galera accepted writes").isGreaterThan(100);
        assertThat((Map<?, ?>) result.figures().get("faults injected")).as("Galera fault kinds")
                .hasSize(Scenario.GALERA.kinds().size());
    }

    /**
     * Galera with node 3's clock ahead: 10 minutes within the default max-clock-skew (15 minutes) keeps every guarantee,
     * and the workers that see that node's writes in their server's future warn of it; 3 s beyond a max-clock-skew of
     * 1 s is detected: those workers say so in their logs (and their readiness goes down).
     */
    @Test
    void clockSkewWithinTheBoundKeepsTheGuaranteesAndBeyondItIsDetected() throws Exception {
        assumeTopologyRuns();
        io.quarkiverse.mysqllock.test.GaleraCluster.assumeAvailable("Galera clock-skew fault runs");
        Options defaults = Options.fromSystemProperties();
        Options options = new Options(Duration.ofSeconds(Long.getLong("faults.ci.skew-seconds", 25)),
                List.of(Scenario.GALERA_SKEW_WITHIN, Scenario.GALERA_SKEW_BEYOND), 3, 8, defaults.names(),
                defaults.ttl(), defaults.keepalive(), report("-skew"), defaults.seed(), System.out);

        List<Result> results = FaultSuite.run(options);

        Result within = results.get(0);
        Result beyond = results.get(1);
        String detections = "workers that logged a server clock ahead beyond max-clock-skew";
        assertThat(within.violations()).as("violations with the skew within the bound").isEmpty();
        assertThat((Long) within.figures().get("accepted writes")).isGreaterThan(100);
        assertThat((Long) within.figures().get(detections)).as("false skew alarms").isZero();
        assertThat((Long) within.figures().get("workers that warned of a server clock ahead")).as("skew warnings")
                .isPositive();
        assertThat((Long) beyond.figures().get(detections)).as("workers that detected the skew").isPositive();
        assertThat(beyond.failures()).as("a run beyond the bound shows what breaks; it does not fail").isEmpty();
    }

    /**
     * The LEASE engine on a primary and replica that fail over again and again (replication link stalled for 1 s, then
     * the primary killed). Lossless semi-synchronous replication: no violation. Asynchronous: the writes the primary
     * acknowledged during the stall are gone after the failover, and their fences are issued again: the suite must see
     * it, or it could not see it when it matters.
     */
    @Test
    void semiSynchronousFailoverKeepsTheGuaranteesAsynchronousLosesAcknowledgedWrites() throws Exception {
        assumeTopologyRuns();
        Options defaults = Options.fromSystemProperties();
        Options options = new Options(Duration.ofSeconds(Long.getLong("faults.ci.failover-seconds", 30)),
                List.of(Scenario.FAILOVER_SEMISYNC, Scenario.FAILOVER_ASYNC), 3, 8, defaults.names(), defaults.ttl(),
                defaults.keepalive(), report("-failover"), defaults.seed(), System.out);

        List<Result> results = FaultSuite.run(options);

        Result semiSync = results.get(0);
        Result async = results.get(1);
        for (Result result : results) {
            Map<?, ?> faults = (Map<?, ?>) result.figures().get("faults injected");
            assertThat((Long) faults.get(FaultSuite.Kind.FAILOVER.label)).as("%s failovers", result.scenario().label)
                    .isGreaterThanOrEqualTo(2);
            assertThat((Long) result.figures().get("accepted writes")).as("%s accepted writes", result.scenario().label)
                    .isGreaterThan(50);
        }
        assertThat(semiSync.violations()).as("semi-synchronous failover violations").isEmpty();
        assertThat((Long) async.figures().get("writes acknowledged to holders, missing from the resource"))
                .as("acknowledged writes lost by asynchronous failover").isPositive();
        assertThat(async.violations()).isNotEmpty();
        assertThat(async.failures()).as("an asynchronous failover run shows what breaks; it does not fail").isEmpty();
    }
}
