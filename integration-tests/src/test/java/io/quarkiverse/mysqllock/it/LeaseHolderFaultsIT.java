package io.quarkiverse.mysqllock.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.test.AppProcess;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * LEASE engine across processes (2 s ttl): a holder that stops renewing loses its lease after the ttl, another
 * process takes it over, and a paused holder that comes back learns it lost it.
 */
class LeaseHolderFaultsIT {

    static final Duration TTL = Duration.ofSeconds(2);

    @Test
    void aKilledHoldersLeaseIsTakenOverAfterItExpires() {
        TestDatabase db = TestDatabase.shared();
        try (AppProcess holder = Workers.start(db, "lease-holder", worker("it:lease-killed", "10m"), null)) {
            holder.awaitLine(line -> line.contains("lease-holder holds 'it:lease-killed'"), Duration.ofSeconds(60));
            try (AppProcess waiter = Workers.start(db, "lease-waiter", worker("it:lease-killed", "0ms"), null)) {
                waiter.awaitLine(line -> line.contains("Installed features"), Duration.ofSeconds(60));
                long killedAt = System.nanoTime();
                holder.kill();
                waiter.awaitLine(line -> line.contains("lease-waiter holds 'it:lease-killed'"), Duration.ofSeconds(15));
                long takeoverMillis = (System.nanoTime() - killedAt) / 1_000_000;
                System.out.println("LEASE take-over after SIGKILL of the holder: " + takeoverMillis + " ms");
                // Not before the lease could have expired, and soon after it did.
                assertThat(takeoverMillis).isBetween(TTL.toMillis() / 2, TTL.toMillis() + 2_000);
            }
        }
    }

    @Test
    void aPausedHolderLearnsItLostTheLeaseWhenItComesBack() {
        TestDatabase db = TestDatabase.shared();
        try (AppProcess holder = Workers.start(db, "paused", worker("it:lease-paused", "10m"), null)) {
            holder.awaitLine(line -> line.contains("paused holds 'it:lease-paused'"), Duration.ofSeconds(60));
            try (AppProcess waiter = Workers.start(db, "patient", worker("it:lease-paused", "0ms"), null)) {
                waiter.awaitLine(line -> line.contains("Installed features"), Duration.ofSeconds(60));
                holder.pause();
                waiter.awaitLine(line -> line.contains("patient holds 'it:lease-paused'"), Duration.ofSeconds(15));
                holder.resume();
                String lost = holder.awaitLine(line -> line.contains("paused lost 'it:lease-paused'"),
                        Duration.ofSeconds(10));
                assertThat(lost).containsAnyOf("took it over", "expired");
            }
        }
    }

    private static Map<String, String> worker(String lock, String hold) {
        Map<String, String> worker = new LinkedHashMap<>();
        worker.put("lock", lock);
        worker.put("hold", hold);
        worker.put("rounds", "1");
        worker.put("wait", "5m");
        worker.put("quarkus.mysql-lock.mode", "lease");
        // a fleet of its own: the other tests' NAMED instances on the shared server (a killed one counts until its
        // membership expires) would keep a LEASE instance from joining theirs
        worker.put("quarkus.mysql-lock.table", "it_lease_faults");
        worker.put("quarkus.mysql-lock.lease.ttl", TTL.toMillis() + "ms");
        return worker;
    }
}
