package io.quarkiverse.mysqllock.deployment.shedlock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * ShedLock's own check of a provider: a counter row incremented under the lock by a read and a write, which loses
 * updates as soon as two holders overlap.
 */
final class SharedCounter {

    private SharedCounter() {
    }

    /** The counter, at 0. */
    static void reset(String counter) {
        ServerState.update("CREATE TABLE IF NOT EXISTS shed_counter (name VARCHAR(40) PRIMARY KEY, value INT NOT NULL)");
        ServerState.update("REPLACE INTO shed_counter VALUES (?, 0)", counter);
    }

    static long value(String counter) {
        return ServerState.queryLong("SELECT value FROM shed_counter WHERE name = ?", counter);
    }

    /** Increments the counter {@code times} times, each under the lock {@code lockName} taken through the provider. */
    static void incrementUnderLock(LockProvider provider, String lockName, String counter, int times,
            AtomicInteger increments) {
        for (int i = 0; i < times;) {
            Optional<SimpleLock> lock = provider.lock(new LockConfiguration(ClockProvider.now(), lockName,
                    Duration.ofSeconds(30), Duration.ZERO));
            if (lock.isEmpty()) {
                // busy: the answer came at once. Retrying without a pause kept two cores so busy on a loaded machine
                // that the holder's own take waited a second for a connection (POOL_EXHAUSTED, in a clean-clone build
                // beside a benchmark run)
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                continue;
            }
            try {
                ServerState.update("UPDATE shed_counter SET value = ? WHERE name = ?", value(counter) + 1, counter);
                increments.incrementAndGet();
                i++;
            } finally {
                lock.get().unlock();
            }
        }
    }
}
