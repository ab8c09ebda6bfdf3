package io.quarkiverse.mysqllock.bench;

import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.inject.Inject;

import org.eclipse.microprofile.config.inject.ConfigProperty;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.MySqlLockManagerFactory;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig;
import io.quarkiverse.mysqllock.runtime.named.NamedLockEngine;
import io.quarkus.runtime.QuarkusApplication;
import io.quarkus.runtime.annotations.QuarkusMain;

/**
 * One benchmark process, started by {@link Benchmarks}: {@code bench.role} is {@code uncontended} (scenarios 1 and 4),
 * {@code hold-many} (scenario 3) or {@code contend} (one of the two processes of scenario 2). Results go to
 * {@code bench.out} as JSON.
 */
@QuarkusMain
public class BenchMain implements QuarkusApplication {

    static final Duration LEASE_TTL = Duration.ofSeconds(3);

    @Inject
    AgroalDataSource dataSource;

    @Inject
    LockManager locks;

    @Inject
    LockedTarget lockedTarget;

    @Inject
    MySqlLockRuntimeConfig config;

    @ConfigProperty(name = "bench.role")
    String role;

    @ConfigProperty(name = "bench.out")
    Path out;

    @ConfigProperty(name = "bench.seconds", defaultValue = "3")
    double seconds;

    @ConfigProperty(name = "bench.rounds", defaultValue = "3")
    int rounds;

    @ConfigProperty(name = "bench.engine", defaultValue = "named")
    String engine;

    @ConfigProperty(name = "bench.redis")
    java.util.Optional<String> redis;

    @ConfigProperty(name = "bench.hold.threads", defaultValue = "100")
    int holdThreads;

    @ConfigProperty(name = "bench.hold.per-thread", defaultValue = "100")
    int holdPerThread;

    @ConfigProperty(name = "bench.curve.sizes", defaultValue = "100,1000,10000,100000")
    int[] curveSizes;

    @ConfigProperty(name = "bench.curve.window-seconds", defaultValue = "20")
    int curveWindowSeconds;

    @ConfigProperty(name = "bench.wait.threads", defaultValue = "1")
    int waitThreads;

    @ConfigProperty(name = "bench.wait.hold-micros", defaultValue = "200")
    long waitHoldMicros;

    @ConfigProperty(name = "bench.go")
    java.util.Optional<Path> go;

    @ConfigProperty(name = "bench.instance.id", defaultValue = "1")
    String instanceId;

    @ConfigProperty(name = "bench.instance.locks", defaultValue = "100")
    int instanceLocks;

    @ConfigProperty(name = "bench.table.rows", defaultValue = "1000000")
    int tableRows;

    @Override
    public int run(String... args) throws Exception {
        if (role.equals("job")) {
            // the scheduling benchmark: BenchJob runs the ticks until the controller stops this instance
            io.quarkus.runtime.Quarkus.waitForExit();
            return 0;
        }
        Map<String, Object> result = switch (role) {
            case "uncontended" -> uncontended();
            case "hold-many" -> holdMany();
            case "contend" -> contend();
            case "hold-curve" -> new Curves(dataSource).hold(manager(), curveSizes, holdThreads,
                    Duration.ofSeconds(curveWindowSeconds));
            case "wait" -> new Curves(dataSource).wait(manager(), waitThreads, seconds, waitHoldMicros, go.orElseThrow());
            case "instance" -> new Curves(dataSource).instance(manager(), instanceId, instanceLocks, go.orElseThrow());
            case "table" -> new Curves(dataSource).table(leaseManager(config.lease().ttl()),
                    WithMode.table(config, MySqlLockRuntimeConfig.Mode.LEASE), tableRows);
            case "semaphore" -> semaphores();
            case "leader" -> lead();
            case "fenced" -> fenced();
            default -> throw new IllegalArgumentException("bench.role=" + role + ": uncontended, hold-many, contend,"
                    + " hold-curve, wait, instance, table, semaphore, leader, fenced or job");
        };
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(out.toFile(), result);
        return 0;
    }

    /** The engine {@code bench.engine} names: the application's NAMED bean, or a LEASE manager (default ttl). */
    private MySqlLockManager manager() {
        return engine.equals("lease") ? leaseManager(config.lease().ttl()) : (MySqlLockManager) locks;
    }

    /** The LEASE engine on the same datasource, a second manager built as the bean is. */
    private MySqlLockManager leaseManager(Duration ttl) {
        return MySqlLockManagerFactory.create(dataSource, "<default>",
                new WithMode(config, MySqlLockRuntimeConfig.Mode.LEASE, ttl));
    }

    private Map<String, Object> uncontended() throws Exception {
        Runner runner = new Runner(1, seconds, rounds);
        Map<String, Object> result = new LinkedHashMap<>();
        try (MySqlLockManager lease = leaseManager(LEASE_TTL)) {
            // The engine creates the lock table on first use; the floor needs it too.
            lease.acquire("bench:setup", Duration.ZERO).release();
            List<Subject> subjects = new ArrayList<>(List.of(
                    Floors.named(dataSource),
                    Engines.acquireRelease("NAMED engine", locks),
                    Floors.lease(dataSource, WithMode.table(config, MySqlLockRuntimeConfig.Mode.LEASE),
                            LEASE_TTL.toNanos() / 1000),
                    Engines.acquireRelease("LEASE engine", lease),
                    Peers.shedLock(dataSource),
                    Peers.spring(dataSource)));
            if (redis.isPresent()) {
                subjects.add(Peers.redisson(redis.get()));
            }
            try {
                Map<String, Object> scenario1 = new LinkedHashMap<>();
                for (int threads : new int[] { 1, 16 }) {
                    scenario1.put(String.valueOf(threads), runner.run(subjects, threads, "s1t" + threads));
                }
                result.put("uncontended", scenario1);
                List<Subject> annotation = List.of(Floors.named(dataSource),
                        Engines.withLock("withLock (NAMED)", locks),
                        Engines.locked("@Locked (NAMED)", lockedTarget),
                        Engines.withLock("withLock (LEASE)", lease));
                // Scenario 4 compares two subjects a few percent apart: more rounds, compared pairwise.
                result.put("locked", new Runner(1, seconds, Math.max(rounds, 7)).run(annotation, 1, "s4"));
                // The interceptor's own time, without the database's noise: both on a lock the thread already holds.
                result.put("locked nested", runner.run(List.of(
                        Engines.nested(Engines.withLock("withLock (NAMED)", locks), locks),
                        Engines.nested(Engines.locked("@Locked (NAMED)", lockedTarget), locks)), 1, "s4n"));
            } finally {
                for (Subject subject : subjects) {
                    subject.close();
                }
            }
        }
        return result;
    }

    /**
     * The fenced commit's cost: a transaction under a lock, plain then fenced, on each engine, at 1 and 16 threads (each
     * on its own lock and row). The NAMED plain transaction is the baseline of the ratios.
     */
    private Map<String, Object> fenced() throws Exception {
        Runner runner = new Runner(1, seconds, rounds);
        Map<String, Object> result = new LinkedHashMap<>();
        Transactions.createTable(dataSource);
        try (MySqlLockManager lease = leaseManager(LEASE_TTL);
                MySqlLockManager namedFenced = MySqlLockManagerFactory.create(dataSource, "<default>",
                        new WithMode(config, MySqlLockRuntimeConfig.Mode.NAMED, LEASE_TTL, true))) {
            lease.acquire("bench:setup", Duration.ZERO).release();
            List<Subject> subjects = List.of(
                    Transactions.of("NAMED, plain commit", locks, dataSource, false),
                    Transactions.of("NAMED, fenced commit", namedFenced, dataSource, true),
                    Transactions.of("LEASE, plain commit", lease, dataSource, false),
                    Transactions.of("LEASE, fenced commit", lease, dataSource, true));
            for (int threads : new int[] { 1, 16 }) {
                result.put(String.valueOf(threads), runner.run(subjects, threads, "fenced" + threads));
            }
        }
        return result;
    }

    /**
     * Semaphore throughput: a permit acquired and released per cycle, at 1 and 16 threads, each semaphore with as many
     * permits as threads, beside the NAMED floor (the baseline of the ratios) and the plain lock, and Redisson's
     * {@code RSemaphore} when a Redis runs.
     */
    private Map<String, Object> semaphores() throws Exception {
        Runner runner = new Runner(1, seconds, rounds);
        Map<String, Object> result = new LinkedHashMap<>();
        try (MySqlLockManager lease = leaseManager(LEASE_TTL)) {
            lease.acquire("bench:setup", Duration.ZERO).release();
            for (int threads : new int[] { 1, 16 }) {
                List<Subject> subjects = new ArrayList<>(List.of(Floors.named(dataSource),
                        Engines.acquireRelease("NAMED lock", locks),
                        Engines.permit("NAMED semaphore", locks, threads),
                        Engines.permit("LEASE semaphore", lease, threads)));
                if (redis.isPresent()) {
                    subjects.add(Peers.redissonSemaphore(redis.get(), threads));
                }
                try {
                    result.put(String.valueOf(threads), runner.run(subjects, threads, "sem" + threads));
                } finally {
                    for (Subject subject : subjects) {
                        subject.close();
                    }
                }
            }
        }
        return result;
    }

    /**
     * One process of the failover benchmark: joins the election of {@code bench:leader} (LeaderProbe says when it
     * leads) and stays until killed.
     */
    private Map<String, Object> lead() throws InterruptedException {
        MySqlLockManager manager = engine.equals("lease") ? leaseManager(LEASE_TTL) : (MySqlLockManager) locks;
        manager.election("bench:leader").join();
        System.out.println("BENCH-JOINED " + instanceId);
        new CountDownLatch(1).await();
        return Map.of();
    }

    /** Scenario 3: {@code holdThreads} threads hold {@code holdPerThread} distinct locks each, all at once. */
    private Map<String, Object> holdMany() throws Exception {
        // The production default ttl (30 s, renewed every 10 s): many leases are what long ttls are for.
        Duration ttl = config.lease().ttl();
        MySqlLockManager manager = engine.equals("lease") ? leaseManager(ttl) : (MySqlLockManager) locks;
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("engine", manager.mode().name());
        result.put("ttlSeconds", ttl.toSeconds());
        result.put("locks", holdThreads * holdPerThread);
        result.put("threads", holdThreads);
        long heapBefore = usedHeap();
        CountDownLatch held = new CountDownLatch(holdThreads);
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> holders = new ArrayList<>();
        java.util.Queue<LockHandle> all = new java.util.concurrent.ConcurrentLinkedQueue<>();
        long start = System.nanoTime();
        for (int t = 0; t < holdThreads; t++) {
            int thread = t;
            Thread holder = new Thread(() -> {
                List<LockHandle> handles = new ArrayList<>();
                try {
                    for (int i = 0; i < holdPerThread; i++) {
                        LockHandle handle = manager.acquire("bench:many:" + thread + ":" + i, Duration.ofSeconds(30));
                        handles.add(handle);
                        all.add(handle);
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
                held.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                handles.forEach(LockHandle::release);
            }, "holder-" + t);
            holders.add(holder);
            holder.start();
        }
        held.await();
        result.put("acquireAllSeconds", (System.nanoTime() - start) / 1e9);
        if (failure.get() != null) {
            result.put("failure", String.valueOf(failure.get()));
        }
        result.put("held", manager.held().size());
        if (manager.engine() instanceof NamedLockEngine named) {
            result.put("pinnedConnections", named.pinnedConnections());
        }
        result.put("heapBytesPerLock", (usedHeap() - heapBefore) / Math.max(1, manager.held().size()));
        // Statements while holding: renewals (LEASE) or keepalives (NAMED), over two renewal periods (ttl / 3 each).
        Duration period = ttl.dividedBy(3);
        Duration window = period.multipliedBy(2);
        long questionsBefore = questions();
        TimeUnit.NANOSECONDS.sleep(window.toNanos());
        long statements = questions() - questionsBefore - 1;
        result.put("statementsWhileHolding", statements);
        result.put("windowSeconds", window.toSeconds());
        result.put("statementsPerSecond", statements / (window.toNanos() / 1e9));
        result.put("statementsPerRenewalPeriod", engine.equals("lease") ? statements / 2.0 : null);
        result.put("validAfterWindow", all.stream().filter(LockHandle::isValid).count());
        release.countDown();
        for (Thread holder : holders) {
            holder.join();
        }
        result.put("heldAfterRelease", manager.held().size());
        if (manager != locks) {
            manager.close();
        }
        return result;
    }

    /** Scenario 2: 16 threads take one name in turn, each cycle's times journaled for the hand-off latencies. */
    private Map<String, Object> contend() throws Exception {
        MySqlLockManager manager = engine.equals("lease") ? leaseManager(LEASE_TTL) : (MySqlLockManager) locks;
        int threads = 16;
        List<long[]> cycles = java.util.Collections.synchronizedList(new ArrayList<>());
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long questionsBefore = questions();
        long end = System.nanoTime() + (long) (seconds * rounds * 1e9);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread worker = new Thread(() -> {
                try {
                    while (System.nanoTime() < end) {
                        LockHandle handle = manager.acquire("bench:contended", Duration.ofSeconds(30));
                        long acquired = micros();
                        long released = micros();
                        handle.release();
                        cycles.add(new long[] { acquired, released });
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
            workers.add(worker);
            worker.start();
        }
        for (Thread worker : workers) {
            worker.join();
        }
        long statements = questions() - questionsBefore;
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("engine", manager.mode().name());
        result.put("acquisitions", cycles.size());
        result.put("statements", statements);
        result.put("cycles", cycles);
        if (failure.get() != null) {
            result.put("failure", String.valueOf(failure.get()));
        }
        if (manager != locks) {
            manager.close();
        }
        return result;
    }

    static long micros() {
        Instant now = Instant.now();
        return ChronoUnit.MICROS.between(Instant.EPOCH, now);
    }

    private long questions() throws SQLException {
        return Curves.questions(dataSource);
    }

    private static long usedHeap() {
        return Curves.usedHeap();
    }
}
