package io.quarkiverse.mysqllock.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.test.AppProcess;
import io.quarkiverse.mysqllock.test.TestDatabase;

/** A holder process killed with SIGKILL: the server frees its lock at once and a waiting process takes over. */
class KilledHolderIT {

    @Test
    void aWaitingProcessTakesOverWhenTheHolderDies() {
        TestDatabase db = TestDatabase.shared();
        try (AppProcess holder = Workers.start(db, "holder", Map.of("lock", "it:killed", "hold", "10m", "rounds", "1"),
                null)) {
            holder.awaitLine(line -> line.contains("holder holds 'it:killed'"), Duration.ofSeconds(60));
            try (AppProcess waiter = Workers.start(db, "waiter",
                    Map.of("lock", "it:killed", "rounds", "1", "wait", "5m"), null)) {
                waiter.awaitLine(line -> line.contains("Installed features"), Duration.ofSeconds(60));
                assertThat(waiter.lines()).noneMatch(line -> line.contains("waiter holds"));

                long killedAt = System.nanoTime();
                holder.kill();
                waiter.awaitLine(line -> line.contains("waiter holds 'it:killed'"), Duration.ofSeconds(10));
                long takeoverMillis = (System.nanoTime() - killedAt) / 1_000_000;
                System.out.println("Take-over after SIGKILL of the holder: " + takeoverMillis + " ms");
                assertThat(takeoverMillis).isLessThan(3_000);
                assertThat(waiter.awaitExit(Duration.ofSeconds(30))).isZero();
            }
        }
    }
}
