package io.quarkiverse.mysqllock.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs subjects for a fixed time on N threads, each on its own lock, in interleaved rounds (A B C A B C ...) so that a
 * slow phase of a noisy machine hits every subject alike. Reports the median throughput of the rounds and latency
 * percentiles over every sampled cycle.
 */
final class Runner {

    private static final int MAX_SAMPLES_PER_THREAD = 1 << 17;

    private final long warmupNanos;
    private final long measureNanos;
    private final int rounds;

    Runner(double warmupSeconds, double measureSeconds, int rounds) {
        this.warmupNanos = (long) (warmupSeconds * 1e9);
        this.measureNanos = (long) (measureSeconds * 1e9);
        this.rounds = rounds;
    }

    /** Each subject's result at this thread count, in the order given. */
    Map<String, Map<String, Object>> run(List<Subject> subjects, int threads, String scenario) throws Exception {
        Map<String, List<Double>> throughputs = new LinkedHashMap<>();
        Map<String, List<Double>> serverCpu = new LinkedHashMap<>();
        Map<String, List<long[]>> latencies = new LinkedHashMap<>();
        for (Subject subject : subjects) {
            timed(subject, threads, scenario, warmupNanos);
        }
        for (int round = 0; round < rounds; round++) {
            for (Subject subject : subjects) {
                Measurement m = timed(subject, threads, scenario, measureNanos);
                throughputs.computeIfAbsent(subject.name(), k -> new ArrayList<>()).add(m.opsPerSecond);
                serverCpu.computeIfAbsent(subject.name(), k -> new ArrayList<>()).add(m.serverCpuMicrosPerOp);
                latencies.computeIfAbsent(subject.name(), k -> new ArrayList<>()).add(m.latencies);
            }
        }
        Map<String, Map<String, Object>> results = new LinkedHashMap<>();
        for (Subject subject : subjects) {
            long[] all = latencies.get(subject.name()).stream().flatMapToLong(Arrays::stream).sorted().toArray();
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("threads", threads);
            result.put("opsPerSecond", median(throughputs.get(subject.name())));
            result.put("roundsOpsPerSecond", throughputs.get(subject.name()));
            result.put("serverCpuMicrosPerOp", median(serverCpu.get(subject.name())));
            result.put("p50Micros", percentile(all, 0.50) / 1000.0);
            result.put("p99Micros", percentile(all, 0.99) / 1000.0);
            result.put("cycles", all.length);
            results.put(subject.name(), result);
        }
        return results;
    }

    /** @param serverCpuMicrosPerOp the CPU the servers (the database, Redis) used per cycle */
    private record Measurement(double opsPerSecond, long[] latencies, double serverCpuMicrosPerOp) {
    }

    /** CPU time the database and Redis server processes have used so far, in nanoseconds. */
    static long serverCpuNanos() {
        return ProcessHandle.allProcesses().filter(process -> {
            String command = process.info().command().orElse("");
            return command.endsWith("mariadbd") || command.endsWith("mysqld") || command.endsWith("redis-server");
        }).mapToLong(process -> process.info().totalCpuDuration().map(java.time.Duration::toNanos).orElse(0L)).sum();
    }

    private static Measurement timed(Subject subject, int threads, String scenario, long nanos) throws Exception {
        CountDownLatch ready = new CountDownLatch(threads);
        CountDownLatch go = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long[][] samples = new long[threads][];
        int[] counts = new int[threads];
        long[] deadline = new long[1];
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int index = t;
            Thread worker = new Thread(() -> {
                long[] mine = new long[MAX_SAMPLES_PER_THREAD];
                int n = 0;
                try (Subject.Worker w = subject.worker("bench:" + scenario + ":" + index)) {
                    ready.countDown();
                    go.await();
                    long end = deadline[0];
                    long now = System.nanoTime();
                    while (now < end) {
                        w.cycle();
                        long after = System.nanoTime();
                        if (n < mine.length) {
                            mine[n] = after - now;
                        }
                        n++;
                        now = after;
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                    ready.countDown();
                }
                samples[index] = mine;
                counts[index] = n;
            }, "bench-" + t);
            workers.add(worker);
            worker.start();
        }
        ready.await();
        long serverCpuBefore = serverCpuNanos();
        long start = System.nanoTime();
        deadline[0] = start + nanos;
        go.countDown();
        for (Thread worker : workers) {
            worker.join();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        long serverCpu = serverCpuNanos() - serverCpuBefore;
        if (failure.get() != null) {
            throw new IllegalStateException(subject.name() + " failed on " + threads + " threads", failure.get());
        }
        long total = 0;
        List<long[]> kept = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            total += counts[t];
            kept.add(Arrays.copyOf(samples[t], Math.min(counts[t], MAX_SAMPLES_PER_THREAD)));
        }
        return new Measurement(total / seconds, kept.stream().flatMapToLong(Arrays::stream).toArray(),
                total == 0 ? 0 : serverCpu / 1000.0 / total);
    }

    static double median(List<Double> values) {
        double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return sorted.length % 2 == 1 ? sorted[sorted.length / 2]
                : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
    }

    static long percentile(long[] sorted, double q) {
        return sorted.length == 0 ? 0 : sorted[Math.min(sorted.length - 1, (int) Math.floor(q * sorted.length))];
    }
}
