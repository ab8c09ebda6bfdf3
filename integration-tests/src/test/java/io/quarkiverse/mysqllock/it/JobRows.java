package io.quarkiverse.mysqllock.it;

import java.util.List;

import io.quarkiverse.mysqllock.test.TestDatabase;

/** A job's rows in the extension's tables, as earlier tests of the shared server left them. */
final class JobRows {

    private JobRows() {
    }

    /** Deletes the job's row, history, audit trail and tick row of older builds: a new job, to a test. */
    static void forget(TestDatabase db, String job) {
        for (String[] rows : List.of(new String[] { "mysql_lock_job", "name" }, new String[] { "mysql_lock_run", "name" },
                new String[] { "mysql_lock_audit", "target_key" }, new String[] { "mysql_lock", "name" })) {
            if (db.queryLong("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE()"
                    + " AND table_name = ?", rows[0]) > 0) {
                db.execute("DELETE FROM " + rows[0] + " WHERE " + rows[1] + " = '"
                        + (rows[0].equals("mysql_lock") ? "tick@" + job : job) + "'");
            }
        }
    }
}
