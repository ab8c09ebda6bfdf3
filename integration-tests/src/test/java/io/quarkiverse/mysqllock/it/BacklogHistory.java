package io.quarkiverse.mysqllock.it;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;

import io.quarkiverse.mysqllock.test.TestDatabase;

/** The history {@code BacklogJob} writes, one row per run that ended, and what the tests check of it. */
final class BacklogHistory {

    private BacklogHistory() {
    }

    /** A new, empty history, and no row of the job left by an earlier test. */
    static void create(TestDatabase db) {
        db.execute("DROP TABLE IF EXISTS backlog_history");
        db.execute("CREATE TABLE backlog_history (id BIGINT AUTO_INCREMENT PRIMARY KEY, tick BIGINT NOT NULL,"
                + " kind VARCHAR(16) NOT NULL, instance VARCHAR(100) NOT NULL, started_at TIMESTAMP(3) NOT NULL,"
                + " ended_at TIMESTAMP(3) NOT NULL)");
        JobRows.forget(db, "cron:backlog");
    }

    /** The job's runs in progress, as its history has them: 0 before the history table is created (at a first run). */
    static long inProgress(TestDatabase db) {
        return db.queryLong("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE()"
                + " AND table_name = 'mysql_lock_run'") == 0 ? 0
                        : db.queryLong("SELECT COUNT(*) FROM mysql_lock_run WHERE name = 'cron:backlog'"
                                + " AND outcome = 'RUNNING'");
    }

    /** The pairs of runs whose times overlapped: two holders of the job's lock at once. */
    static long overlapping(TestDatabase db) {
        return db.queryLong("SELECT COUNT(*) FROM backlog_history a JOIN backlog_history b ON a.id < b.id"
                + " AND a.started_at < b.ended_at AND b.started_at < a.ended_at");
    }

    /** Every run, with the job's history rows of its tick, one line each, for a failure's message. */
    static String rows(TestDatabase db) {
        StringBuilder found = new StringBuilder();
        try (Connection connection = db.connect();
                ResultSet rs = connection.createStatement().executeQuery("SELECT b.id, b.tick, b.kind, b.instance,"
                        + " b.started_at, b.ended_at, r.id, r.kind, r.outcome, r.instance, r.started_at, r.ended_at"
                        + " FROM backlog_history b LEFT JOIN mysql_lock_run r ON r.name = 'cron:backlog'"
                        + " AND r.tick = b.tick * 1000 ORDER BY b.started_at")) {
            while (rs.next()) {
                found.append('\n');
                for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                    found.append(rs.getString(i)).append(' ');
                }
            }
        } catch (SQLException e) {
            found.append(e);
        }
        return found.toString();
    }
}
