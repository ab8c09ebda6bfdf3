package io.quarkiverse.mysqllock.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.test.AppProcess;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * Three JVM processes, four threads each, contend for one lock. Inside it each does an unsafe read-modify-write of a
 * counter: any overlap shows up as a lost update, as more than one holder inside at once, or as fences out of order.
 */
class MultiProcessContentionIT {

    static final int PROCESSES = 3;
    static final int THREADS = 4;
    static final int ROUNDS = 20;

    @Test
    void holdersInDifferentProcessesNeverOverlap() throws Exception {
        TestDatabase db = TestDatabase.shared();
        List<AppProcess> processes = new ArrayList<>();
        try {
            for (int p = 1; p <= PROCESSES; p++) {
                processes.add(Workers.start(db, "proc-" + p, Map.of("lock", "it:contended", "threads",
                        String.valueOf(THREADS), "rounds", String.valueOf(ROUNDS)), null));
            }
            for (AppProcess process : processes) {
                assertThat(process.awaitExit(Duration.ofMinutes(3))).as(process.name() + " exit code").isZero();
            }
        } finally {
            processes.forEach(AppProcess::close);
        }

        int total = PROCESSES * THREADS * ROUNDS;
        try (Connection connection = db.connect(); Statement statement = connection.createStatement()) {
            ResultSet counter = statement.executeQuery(
                    "SELECT value, inside, max_inside FROM lock_counter WHERE name = 'it:contended'");
            counter.next();
            assertThat(counter.getInt("value")).as("updates not lost").isEqualTo(total);
            assertThat(counter.getInt("max_inside")).as("holders inside at once").isEqualTo(1);
            assertThat(counter.getInt("inside")).isZero();

            ResultSet history = statement.executeQuery(
                    "SELECT instance, fence FROM lock_history WHERE name = 'it:contended' ORDER BY id");
            long last = 0;
            int sections = 0;
            java.util.Set<String> instances = new java.util.HashSet<>();
            while (history.next()) {
                assertThat(history.getLong("fence")).as("fence after " + last).isGreaterThan(last);
                last = history.getLong("fence");
                instances.add(history.getString("instance"));
                sections++;
            }
            assertThat(sections).isEqualTo(total);
            assertThat(instances).hasSize(PROCESSES);

            ResultSet held = statement.executeQuery("SELECT IS_USED_LOCK('it:contended')");
            held.next();
            assertThat(held.getObject(1)).as("nobody holds the lock after the processes exit").isNull();
        }
    }
}
