package io.quarkiverse.mysqllock.runtime.features;

import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockInfo;

/**
 * Warns, once per hold, of the locks this instance has held longer than {@code quarkus.mysql-lock.long-hold-warning}:
 * a job that hangs keeps its lock, and nothing else says so until the next run is skipped.
 */
public final class LongHolds implements Runnable {

    private static final Logger LOG = Logger.getLogger(LongHolds.class);

    private final Supplier<List<LockInfo>> held;
    private final Duration threshold;
    /** The holds warned of, by name and grant, forgotten once released; only the watch's thread uses it. */
    private Set<String> warned = new HashSet<>();

    public LongHolds(Supplier<List<LockInfo>> held, Duration threshold) {
        this.held = held;
        this.threshold = threshold;
    }

    /** How often the holds are looked at: a quarter of the threshold, between a second and a minute. */
    public static Duration period(Duration threshold) {
        Duration quarter = threshold.dividedBy(4);
        return quarter.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1)
                : quarter.compareTo(Duration.ofMinutes(1)) > 0 ? Duration.ofMinutes(1) : quarter;
    }

    @Override
    public void run() {
        try {
            Instant now = Instant.now();
            Set<String> stillHeld = new HashSet<>();
            for (LockInfo lock : held.get()) {
                String key = lock.name() + "@" + lock.since();
                stillHeld.add(key);
                Duration heldFor = Duration.between(lock.since(), now);
                if (heldFor.compareTo(threshold) > 0 && !warned.contains(key)) {
                    LOG.warnf("Lock '%s' has been held for %s (since %s) by %s, longer than"
                            + " quarkus.mysql-lock.long-hold-warning=%s. A job that hangs keeps its lock: give it an"
                            + " atMostFor cap (and interruptOnLoss) if it must end", lock.name(), round(heldFor),
                            lock.since(), lock.holder(), threshold);
                    warned.add(key);
                }
            }
            warned.retainAll(stillHeld);
        } catch (RuntimeException e) {
            LOG.debug("Looking for long holds failed; trying again later", e);
        }
    }

    private static Duration round(Duration duration) {
        return Duration.ofSeconds(duration.toSeconds());
    }
}
