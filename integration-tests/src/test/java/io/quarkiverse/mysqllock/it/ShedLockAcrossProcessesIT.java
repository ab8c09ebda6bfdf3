package io.quarkiverse.mysqllock.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.test.AppProcess;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * ShedLock's provider contract across real processes: three JVMs, four threads each, incrementing one counter through
 * ShedLock's LockingTaskExecutor over MySqlLockProvider, lose no update, on each engine.
 */
class ShedLockAcrossProcessesIT {

    private static final int PROCESSES = 3;
    private static final int THREADS = 4;
    private static final int INCREMENTS = 20;

    @Test
    void namedLosesNoUpdate() throws Exception {
        threeProcessesLoseNoUpdate("named");
    }

    @Test
    void leaseLosesNoUpdate() throws Exception {
        threeProcessesLoseNoUpdate("lease");
    }

    private void threeProcessesLoseNoUpdate(String mode) throws Exception {
        TestDatabase db = TestDatabase.shared();
        db.execute("CREATE TABLE IF NOT EXISTS shedlock_counter (name VARCHAR(100) PRIMARY KEY, value INT NOT NULL)");
        db.execute("REPLACE INTO shedlock_counter VALUES ('" + ShedLockCounter.COUNTER + "', 0)");
        List<AppProcess> processes = new ArrayList<>();
        try {
            for (int i = 1; i <= PROCESSES; i++) {
                processes.add(Workers.start(db, "shed-" + mode + "-" + i, Map.of(
                        "lock-demo.shedlock.increments", String.valueOf(INCREMENTS),
                        "lock-demo.shedlock.threads", String.valueOf(THREADS),
                        "quarkus.mysql-lock.mode", mode,
                        "quarkus.mysql-lock.table", "shed_" + mode + "_lock"), null));
            }
            for (AppProcess process : processes) {
                process.awaitLine(line -> line.contains("increments through ShedLock"), Duration.ofSeconds(120));
                assertThat(process.awaitExit(Duration.ofSeconds(30))).isZero();
            }
        } finally {
            processes.forEach(AppProcess::close);
        }
        assertThat(db.queryLong("SELECT value FROM shedlock_counter WHERE name = ?", ShedLockCounter.COUNTER))
                .as("increments of %d processes x %d threads", PROCESSES, THREADS)
                .isEqualTo((long) PROCESSES * THREADS * INCREMENTS);
    }
}
