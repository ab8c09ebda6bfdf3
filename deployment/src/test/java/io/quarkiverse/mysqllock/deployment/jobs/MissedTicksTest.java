package io.quarkiverse.mysqllock.deployment.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.Ticks;
import io.quarkiverse.mysqllock.jobs.RunKind;
import io.quarkiverse.mysqllock.runtime.table.LockTable;
import io.quarkiverse.mysqllock.runtime.table.TickRows;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/** Missed ticks on the NAMED engine (the default on a single server). */
class MissedTicksTest extends MissedTicksContract {

    private static final long HOUR = Duration.ofHours(1).toMillis();
    private static final long BASE = 500_000 * HOUR;

    @RegisterExtension
    static final QuarkusUnitTest app = app(LockApp.app(MissedTicksContract.class, Job.class, Ticks.class))
            .overrideConfigKey("quarkus.mysql-lock.jobs.\"catch:rollback\".missed-ticks", "run-all")
            .overrideConfigKey("quarkus.mysql-lock.jobs.\"catch:rollpause\".missed-ticks", "run-all");

    /**
     * After a rollback to a version before the jobs table, that version claims ticks in the job's tick row only; once
     * upgraded again, those ticks are no gap: they ran, and are not caught up.
     */
    @Test
    void theTicksAVersionBeforeTheJobsTableRanAreNoGap() throws Exception {
        job.rollback(Ticks.at(BASE));
        TickRows olderVersion = new TickRows(new LockTable("mysql_lock", true));
        try (Connection connection = TestDatabase.shared().connect()) {
            assertThat(olderVersion.claim(connection, "tick@catch:rollback", BASE + HOUR)).isTrue();
            assertThat(olderVersion.claim(connection, "tick@catch:rollback", BASE + 2 * HOUR)).isTrue();
        }
        job.rollback(Ticks.at(BASE + 3 * HOUR));
        assertThat(settled("catch:rollback")).as("no gap found: the settled mark is the latest tick before it")
                .isEqualTo(BASE);
        assertThat(pending("catch:rollback")).isZero();
        assertThat(Job.runs("catch:rollback")).containsExactly(new Run(RunKind.SCHEDULED, BASE),
                new Run(RunKind.SCHEDULED, BASE + 3 * HOUR));
    }

    /**
     * A version before the jobs table knows no pause: after a rollback it ran the ticks of a paused job. Upgraded again,
     * the ticks claimed while still paused are caught up after the resume, not those the older version ran.
     */
    @Test
    void theTicksAVersionBeforeTheJobsTableRanDuringAPauseAreNotCaughtUp() throws Exception {
        job.rollPause(Ticks.at(BASE));
        locks.jobs().pause("catch:rollpause", "ops", null);
        TickRows olderVersion = new TickRows(new LockTable("mysql_lock", true));
        try (Connection connection = TestDatabase.shared().connect()) {
            assertThat(olderVersion.claim(connection, "tick@catch:rollpause", BASE + HOUR)).isTrue();
            assertThat(olderVersion.claim(connection, "tick@catch:rollpause", BASE + 2 * HOUR)).isTrue();
        }
        job.rollPause(Ticks.at(BASE + 3 * HOUR)); // paused: to catch up
        locks.jobs().resume("catch:rollpause", "ops", null);
        job.rollPause(Ticks.at(BASE + 4 * HOUR));
        LockApp.await("the catch-up of the paused tick", Duration.ofSeconds(60),
                () -> locks.jobs().history("catch:rollpause", 10).stream()
                        .anyMatch(run -> run.kind() == RunKind.CATCH_UP && run.endedAt() != null));
        assertThat(locks.jobs().history("catch:rollpause", 10)).filteredOn(run -> run.kind() == RunKind.CATCH_UP)
                .extracting(run -> run.tick().toEpochMilli()).containsExactly(BASE + 3 * HOUR);
    }
}
