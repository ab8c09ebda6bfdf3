package io.quarkiverse.mysqllock.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.test.AppProcess;
import io.quarkiverse.mysqllock.test.TestDatabase;

/** Start-up data written once by three JVMs starting together, and finished by another when the writer dies. */
class RunOnceAcrossProcessesIT {

    @BeforeAll
    static void table() {
        TestDatabase.shared().execute("CREATE TABLE IF NOT EXISTS run_once_history (id BIGINT AUTO_INCREMENT"
                + " PRIMARY KEY, name VARCHAR(200) NOT NULL, instance VARCHAR(100) NOT NULL)");
    }

    @Test
    void threeInstancesStartingTogetherWriteTheDataOnce() throws Exception {
        TestDatabase db = TestDatabase.shared();
        List<AppProcess> processes = new ArrayList<>();
        try {
            for (int i = 1; i <= 3; i++) {
                processes.add(Workers.start(db, "seed-" + i,
                        Map.of("lock-demo.run-once", "seed:together", "lock-demo.run-once-duration", "1500ms"), null));
            }
            int written = 0;
            for (AppProcess process : processes) {
                String line = process.awaitLine(l -> l.contains(": start-up data 'seed:together'"), Duration.ofSeconds(60));
                written += line.contains("written by this instance") ? 1 : 0;
            }
            assertThat(written).isEqualTo(1);
        } finally {
            processes.forEach(AppProcess::close);
        }
        assertThat(rows(db, "seed:together")).isEqualTo(1);
    }

    @Test
    void aRunKilledMidwayIsCompletedByTheNextInstance() throws Exception {
        TestDatabase db = TestDatabase.shared();
        try (AppProcess doomed = Workers.start(db, "doomed",
                Map.of("lock-demo.run-once", "seed:killed", "lock-demo.run-once-duration", "10m"), null)) {
            doomed.awaitLine(l -> l.contains("doomed is writing the start-up data 'seed:killed'"), Duration.ofSeconds(60));
            doomed.kill();
        }
        try (AppProcess next = Workers.start(db, "next", Map.of("lock-demo.run-once", "seed:killed"), null)) {
            assertThat(next.awaitLine(l -> l.contains(": start-up data 'seed:killed'"), Duration.ofSeconds(60)))
                    .contains("written by this instance");
        }
        try (AppProcess later = Workers.start(db, "later", Map.of("lock-demo.run-once", "seed:killed"), null)) {
            assertThat(later.awaitLine(l -> l.contains(": start-up data 'seed:killed'"), Duration.ofSeconds(60)))
                    .contains("already there");
        }
        assertThat(rows(db, "seed:killed", "next")).isEqualTo(1);
        assertThat(rows(db, "seed:killed", "later")).isZero();
    }

    private static long rows(TestDatabase db, String name) {
        return db.queryLong("SELECT COUNT(*) FROM run_once_history WHERE name = ?", name);
    }

    private static long rows(TestDatabase db, String name, String instance) {
        return db.queryLong("SELECT COUNT(*) FROM run_once_history WHERE name = ? AND instance = ?", name, instance);
    }
}
