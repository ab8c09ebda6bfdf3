package io.quarkiverse.mysqllock.runtime.jobs;

import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.jobs.JobState;

/**
 * How long each job of a manager has gone without a success anywhere in the fleet: read from the jobs table, the time
 * measured on the server's clock (no instance's clock is compared with it), then counted on from the read with this
 * instance's monotonic clock. A read is kept for {@link #FRESH_NANOS}: the wellness check and the gauges share it.
 */
public final class JobSilences {

    private static final Logger LOG = Logger.getLogger(JobSilences.class);
    static final long FRESH_NANOS = TimeUnit.SECONDS.toNanos(10);

    /**
     * One job, as read.
     *
     * @param job the job's name
     * @param state its state for the fleet
     * @param sinceMicros how long it had gone without a success when read (since its row was made, if it never
     *        succeeded), on the server's clock
     * @param neverSucceeded whether no run of it ever succeeded
     * @param readNanos when it was read ({@link System#nanoTime()})
     */
    public record Silence(String job, JobState state, long sinceMicros, boolean neverSucceeded, long readNanos) {

        /** How long it has gone without a success, now. */
        public Duration now() {
            return Duration.ofNanos(TimeUnit.MICROSECONDS.toNanos(sinceMicros) + (System.nanoTime() - readNanos));
        }
    }

    private final Supplier<JobStore> store;
    private final Predicate<String> ours;
    private final Executor worker;
    private final AtomicBoolean refreshing = new AtomicBoolean();
    private volatile Map<String, Silence> last = Map.of();
    private volatile long readNanos = System.nanoTime() - 2 * FRESH_NANOS;

    JobSilences(Supplier<JobStore> store, Predicate<String> ours, Executor worker) {
        this.store = store;
        this.ours = ours;
        this.worker = worker;
    }

    /** Every job's, by name: read now (blocking) unless the last read is fresh. */
    public Map<String, Silence> read() {
        if (System.nanoTime() - readNanos < FRESH_NANOS) {
            return last;
        }
        Map<String, Silence> read = new TreeMap<>();
        long now = System.nanoTime();
        store.get().silences((key, silence) -> {
            if (ours.test(key)) {
                read.put(silence.job(), silence);
            }
        }, now);
        last = Map.copyOf(read);
        readNanos = now;
        return last;
    }

    /**
     * One job's, now, without blocking: from the last read (null before the first), which is refreshed on a worker
     * thread when it is no longer fresh. For gauges, read wherever the registry is scraped.
     */
    public Duration cached(String job) {
        if (System.nanoTime() - readNanos >= FRESH_NANOS && refreshing.compareAndSet(false, true)) {
            try {
                worker.execute(() -> {
                    try {
                        read();
                    } catch (RuntimeException e) {
                        LOG.debugf("The jobs' last successes could not be read: %s", e.getMessage());
                    } finally {
                        refreshing.set(false);
                    }
                });
            } catch (RejectedExecutionException e) {
                refreshing.set(false);
            }
        }
        Silence silence = last.get(job);
        return silence == null ? null : silence.now();
    }
}
