package io.quarkiverse.mysqllock.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.named.NamedLockEngine;

/**
 * The scale curves, measured inside one benchmark process: how each cost grows with the locks held, the threads waiting
 * for one name, and the rows of the lock table. The instances curve and the server's share of every curve are measured
 * by the controller ({@code Benchmarks}), which sees the server and every process.
 */
final class Curves {

    private final AgroalDataSource dataSource;

    Curves(AgroalDataSource dataSource) {
        this.dataSource = dataSource;
    }

    /**
     * Holds n locks for each n of {@code sizes}, taken by {@code threads} threads at once; for each: the latency of
     * acquiring one more lock while n are held (500 acquisitions of fresh names, one thread), the connections out of the
     * pool, the heap per lock, the statements per second while holding (over {@code window}), and how many were still
     * valid after it.
     */
    Map<String, Object> hold(MySqlLockManager manager, int[] sizes, int threads, Duration window) throws Exception {
        Map<String, Object> curve = new LinkedHashMap<>();
        // compiled before the first point is measured
        for (int i = 0; i < 2000; i++) {
            manager.acquire("curve:warm-up:" + i % 10, Duration.ofSeconds(10)).release();
        }
        for (int size : sizes) {
            Map<String, Object> point = new LinkedHashMap<>();
            long heapBefore = usedHeap();
            int perThread = Math.max(1, size / threads);
            int holders = Math.min(threads, size);
            ConcurrentLinkedQueue<LockHandle> all = new ConcurrentLinkedQueue<>();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            CountDownLatch held = new CountDownLatch(holders);
            long start = System.nanoTime();
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < holders; t++) {
                int thread = t;
                Thread worker = new Thread(() -> {
                    try {
                        for (int i = 0; i < perThread; i++) {
                            all.add(manager.acquire("curve:" + size + ":" + thread + ":" + i, Duration.ofSeconds(60)));
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    } finally {
                        held.countDown();
                    }
                });
                workers.add(worker);
                worker.start();
            }
            held.await();
            point.put("fillSeconds", (System.nanoTime() - start) / 1e9);
            point.put("held", all.size());
            if (failure.get() != null) {
                point.put("failure", String.valueOf(failure.get()));
            }
            point.put("heapBytesPerLock", (usedHeap() - heapBefore) / Math.max(1, all.size()));
            long[] latencies = new long[500];
            for (int i = 0; i < latencies.length; i++) {
                long begin = System.nanoTime();
                LockHandle probe = manager.acquire("curve:probe:" + size + ":" + i, Duration.ofSeconds(10));
                latencies[i] = System.nanoTime() - begin;
                probe.release();
            }
            Arrays.sort(latencies);
            point.put("acquireP50Micros", Runner.percentile(latencies, 0.5) / 1000.0);
            point.put("acquireP99Micros", Runner.percentile(latencies, 0.99) / 1000.0);
            point.put("connectionsOutOfPool", outOfPool(manager));
            long questions = questions();
            TimeUnit.NANOSECONDS.sleep(window.toNanos());
            point.put("statementsPerSecondWhileHolding", (questions() - questions - 1) / (window.toNanos() / 1e9));
            point.put("validAfterWindow", all.stream().filter(LockHandle::isValid).count());
            long releaseStart = System.nanoTime();
            all.parallelStream().forEach(LockHandle::release);
            point.put("releaseSeconds", (System.nanoTime() - releaseStart) / 1e9);
            curve.put(String.valueOf(size), point);
        }
        return curve;
    }

    /**
     * One process of the waiters curve: {@code threads} threads take one hot name in turn for {@code seconds}, each
     * holding it {@code holdMicros}; they start together once the controller's file {@code go} exists. Every cycle's
     * request, grant and release times are journaled (µs since the epoch), with the most connections out of the pool.
     */
    Map<String, Object> wait(MySqlLockManager manager, int threads, double seconds, long holdMicros, Path go)
            throws Exception {
        List<long[]> cycles = new ArrayList<>();
        int[] perThread = new int[threads];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicInteger mostOutOfPool = new AtomicInteger();
        System.out.println("benchmark process ready: " + threads + " threads");
        while (!Files.exists(go)) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
        long end = System.nanoTime() + (long) (seconds * 1e9);
        Thread sampler = new Thread(() -> {
            while (System.nanoTime() - end < 0) {
                mostOutOfPool.accumulateAndGet(outOfPool(manager), Math::max);
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
            }
        });
        sampler.start();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            Thread worker = new Thread(() -> {
                List<long[]> mine = new ArrayList<>();
                try {
                    while (System.nanoTime() - end < 0) {
                        long requested = BenchMain.micros();
                        LockHandle handle = manager.acquire("bench:hot", Duration.ofSeconds(120));
                        long acquired = BenchMain.micros();
                        LockSupport.parkNanos(holdMicros * 1000);
                        long released = BenchMain.micros();
                        handle.release();
                        mine.add(new long[] { requested, acquired, released });
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
                perThread[thread] = mine.size();
                synchronized (cycles) {
                    cycles.addAll(mine);
                }
            });
            workers.add(worker);
            worker.start();
        }
        for (Thread worker : workers) {
            worker.join();
        }
        sampler.join();
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("engine", manager.mode().name());
        result.put("threads", threads);
        result.put("cycles", cycles);
        result.put("perThread", perThread);
        result.put("mostConnectionsOutOfPool", mostOutOfPool.get());
        if (failure.get() != null) {
            result.put("failure", String.valueOf(failure.get()));
        }
        return result;
    }

    /** One process of the instances curve: holds {@code locks} locks until the controller's file {@code stop} exists. */
    Map<String, Object> instance(MySqlLockManager manager, String id, int locks, Path stop) throws Exception {
        List<LockHandle> handles = new ArrayList<>();
        for (int i = 0; i < locks; i++) {
            handles.add(manager.acquire("instance:" + id + ":" + i, Duration.ofSeconds(60)));
        }
        System.out.println("benchmark process holding: " + locks);
        while (!Files.exists(stop)) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
        long valid = handles.stream().filter(LockHandle::isValid).count();
        handles.forEach(LockHandle::release);
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("engine", manager.mode().name());
        result.put("held", locks);
        result.put("validAtTheEnd", valid);
        result.put("connectionsOutOfPool", outOfPool(manager));
        return result;
    }

    /**
     * The lock table with many rows: acquisition latency on a table of 1,000 rows; then with {@code rows} more rows of
     * names used once (inserted in bulk), on names that exist and on new ones; the table's size; {@code purgeUnused}
     * of all of them, its time; the latency after it.
     */
    Map<String, Object> table(MySqlLockManager manager, String table, int rows) throws Exception {
        Map<String, Object> result = new LinkedHashMap<>();
        // the earlier curves left their names in this table: the first point is a table of 1,000 names (the fleet's
        // reserved rows, whose names start with '~', stay)
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
            statement.executeUpdate("DELETE FROM " + table + " WHERE name NOT LIKE '~%'");
        }
        for (int i = 0; i < 1000; i++) {
            manager.acquire("small:" + i, Duration.ZERO).release();
        }
        result.put("smallTable", latencies(manager, "small:", 1000, true));
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute("ANALYZE TABLE " + table); // else the estimate still counts the rows deleted above
        }
        result.put("smallTableSize", tableSize(table));
        long insertStart = System.nanoTime();
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
            for (int from = 0; from < rows; from += 100_000) {
                // MariaDB's sequence engine: seq_A_to_B holds A to B, both included
                statement.executeUpdate("INSERT INTO " + table + " (name, fence, acquired_at) SELECT CONCAT('old:', seq),"
                        + " 1 + seq % 1000, UTC_TIMESTAMP(6) - INTERVAL 2 DAY FROM seq_" + from + "_to_"
                        + (Math.min(rows, from + 100_000) - 1));
            }
            statement.execute("ANALYZE TABLE " + table);
        }
        result.put("bulkInsertSeconds", (System.nanoTime() - insertStart) / 1e9);
        result.put("bigTableSize", tableSize(table));
        result.put("bigTableExistingNames", latencies(manager, "old:", rows, true));
        result.put("bigTableNewNames", latencies(manager, "new:", Integer.MAX_VALUE, false));
        long purgeStart = System.nanoTime();
        long purged = manager.purgeUnused(Duration.ofDays(1));
        result.put("purged", purged);
        result.put("purgeSeconds", (System.nanoTime() - purgeStart) / 1e9);
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute("ANALYZE TABLE " + table);
        }
        result.put("afterPurgeSize", tableSize(table));
        result.put("afterPurge", latencies(manager, "old:", rows, true));
        return result;
    }

    /** p50 and p99 of 1,000 acquisitions (acquire only) of names drawn from {@code prefix}0 to {@code prefix}(range-1). */
    private static Map<String, Object> latencies(MySqlLockManager manager, String prefix, int range, boolean existing) {
        long[] latencies = new long[1000];
        java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
        for (int i = 0; i < latencies.length; i++) {
            String name = prefix + (existing ? random.nextInt(range) : System.nanoTime());
            long begin = System.nanoTime();
            LockHandle handle = manager.acquire(name, Duration.ofSeconds(10));
            latencies[i] = System.nanoTime() - begin;
            handle.release();
        }
        Arrays.sort(latencies);
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("p50Micros", Runner.percentile(latencies, 0.5) / 1000.0);
        result.put("p99Micros", Runner.percentile(latencies, 0.99) / 1000.0);
        return result;
    }

    private Map<String, Object> tableSize(String table) throws SQLException {
        try (Connection connection = dataSource.getConnection();
                Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery("SELECT TABLE_ROWS, DATA_LENGTH, INDEX_LENGTH, DATA_FREE"
                        + " FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '" + table
                        + "'")) {
            Map<String, Object> size = new LinkedHashMap<>();
            if (rs.next()) {
                size.put("rows", rs.getLong(1));
                size.put("dataBytes", rs.getLong(2));
                size.put("indexBytes", rs.getLong(3));
                size.put("freeBytes", rs.getLong(4));
            }
            return size;
        }
    }

    /** NAMED: connections pinned; both: connections the pool has lent out now. */
    private int outOfPool(MySqlLockManager manager) {
        int active = (int) dataSource.getMetrics().activeCount();
        return manager.engine() instanceof NamedLockEngine named ? Math.max(active, named.pinnedConnections()) : active;
    }

    private long questions() throws SQLException {
        return questions(dataSource);
    }

    /** The server's count of statements so far. */
    static long questions(AgroalDataSource dataSource) throws SQLException {
        try (Connection connection = dataSource.getConnection();
                Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery(
                        "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'QUESTIONS'")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    static long usedHeap() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        Runtime runtime = Runtime.getRuntime();
        return runtime.totalMemory() - runtime.freeMemory();
    }
}
