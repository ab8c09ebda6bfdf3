package io.quarkiverse.mysqllock.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.test.AppProcess;
import io.quarkiverse.mysqllock.test.Await;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * An instance stopped (SIGTERM) while a run of a scheduled job lasts keeps the job's lock until the run ends: Quarkus
 * ends its beans before its worker threads, and a lock released with the beans would let another instance start the
 * next run while this one's still runs. Two instances of a cron job every two seconds whose runs last four; the one
 * running is stopped; the other's next run starts only once the stopped one's ended.
 */
class ShutdownWhileAJobRunsIT {

    private static final Map<String, String> SETTINGS = Map.of("lock-demo.backlog.cron", "*/2 * * * * ?",
            "lock-demo.backlog.run-millis", "4000");

    @Test
    void aRunInProgressAtShutdownKeepsItsLockUntilItEnds() throws Exception {
        TestDatabase db = TestDatabase.shared();
        BacklogHistory.create(db);
        List<AppProcess> fleet = new ArrayList<>();
        try {
            for (int i = 1; i <= 2; i++) {
                fleet.add(Workers.start(db, "stopping-" + i, SETTINGS, null));
            }
            Await.until("a run to start", Duration.ofSeconds(60), () -> BacklogHistory.inProgress(db) > 0);
            String runner = string(db, "SELECT instance FROM mysql_lock_run WHERE name = 'cron:backlog'"
                    + " AND outcome = 'RUNNING' ORDER BY id DESC LIMIT 1");
            AppProcess stopped = fleet.stream().filter(process -> runner.endsWith("/" + process.name())).findFirst()
                    .orElseThrow();
            AppProcess other = fleet.stream().filter(process -> process != stopped).findFirst().orElseThrow();
            long rowsBefore = db.queryLong("SELECT COUNT(*) FROM backlog_history WHERE instance = ?", stopped.name());
            stopped.close(); // SIGTERM, while its run lasts

            // the run in progress ended during the shutdown, and wrote its row; the other instance ran after it
            long ended = db.queryLong("SELECT COALESCE(MAX(id), 0) FROM backlog_history WHERE instance = ?",
                    stopped.name());
            assertThat(db.queryLong("SELECT COUNT(*) FROM backlog_history WHERE instance = ?", stopped.name()))
                    .as("runs of %s that ended, its output: %s", stopped.name(), stopped.lines())
                    .isGreaterThan(rowsBefore);
            Await.until("the other instance to run after it", Duration.ofSeconds(60), () -> db.queryLong(
                    "SELECT COUNT(*) FROM backlog_history WHERE instance = ? AND id > ?", other.name(), ended) > 0);
        } finally {
            fleet.forEach(AppProcess::close);
        }
        assertThat(BacklogHistory.overlapping(db)).as("runs that overlapped: %s", BacklogHistory.rows(db)).isZero();
    }

    private static String string(TestDatabase db, String sql) throws SQLException {
        try (Connection connection = db.connect(); ResultSet rs = connection.createStatement().executeQuery(sql)) {
            return rs.next() ? rs.getString(1) : "";
        }
    }
}
