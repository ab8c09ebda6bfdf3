package io.quarkiverse.mysqllock.bench;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.quarkiverse.mysqllock.test.AppProcess;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * The same fault schedule for each scheduling subject, its three instances running the job every second: the instance
 * that ran the latest tick paused (SIGSTOP) for 8 s; an instance killed (SIGKILL) and started again; an instance's
 * database sessions killed; every instance killed at once, down 5 s, and started again. Ten seconds between faults.
 * Counted: ticks run twice, ticks not run (besides those of the time every instance was down), and for each fault the
 * ticks not run while it lasted and how long after its end the next tick ran.
 */
final class SchedulingFaults {

    private static final long SETTLE_MILLIS = 10_000;

    private final TestDatabase db;
    private final Path work;
    private final Map<String, String> base;

    SchedulingFaults(TestDatabase db, Path work, Map<String, String> base) {
        this.db = db;
        this.work = work;
        this.base = base;
    }

    /** A fault's work, which may sleep through it. */
    @FunctionalInterface
    interface Fault {
        void inject(JobFleet fleet) throws Exception;
    }

    Map<String, Object> run(SchedulingRuns.Subject subject) throws Exception {
        String name = subject.name();
        Map<String, Object> result = new LinkedHashMap<>();
        List<Map<String, Object>> faults = new ArrayList<>();
        long from;
        long to;
        long downFrom = 0;
        long downTo = 0;
        try (JobFleet fleet = new JobFleet(db, work, base, subject, true)) {
            fleet.awaitTicks();
            from = SchedulingRuns.now();
            faults.add(fault(name, fleet, "the instance of the latest tick paused 8 s", f -> {
                AppProcess latest = f.process(latestRunner(name));
                latest.pause();
                try {
                    Thread.sleep(8_000); // the fault's length
                } finally {
                    latest.resume();
                }
            }));
            faults.add(fault(name, fleet, "an instance killed and started again", f -> {
                f.kill(1);
                f.restart(1);
            }));
            faults.add(fault(name, fleet, "an instance's database sessions killed", f -> killSessions(JobFleet.USERS[2])));
            long[] down = new long[2];
            faults.add(fault(name, fleet, "every instance killed, down 5 s, started again", f -> {
                down[0] = System.currentTimeMillis();
                for (int i = 0; i < JobFleet.USERS.length; i++) {
                    f.kill(i);
                }
                Thread.sleep(5_000); // no instance runs
                for (int i = 0; i < JobFleet.USERS.length; i++) {
                    f.restart(i);
                }
                down[1] = System.currentTimeMillis();
            }));
            downFrom = down[0] / 1000;
            downTo = down[1] / 1000;
            to = SchedulingRuns.now();
        }
        long ticks = to - from - 1;
        result.put("ticks", ticks);
        result.put("ticks run twice", JobFleet.ticksRunTwice(db, name, from, to));
        // those of the time every instance was down (downFrom to downTo, both included) apart
        long ran = JobFleet.ticksRun(db, name, from, to) - JobFleet.ticksRun(db, name, downFrom - 1, downTo + 1);
        result.put("ticks not run, every instance down apart", ticks - (downTo - downFrom + 1) - ran);
        result.put("faults", faults);
        System.out.println("scheduling faults " + name + ": " + result);
        return result;
    }

    /** Injects a fault, then lets the fleet run: its ticks not run while it lasted, and when the next tick ran. */
    private Map<String, Object> fault(String subject, JobFleet fleet, String what, Fault fault) throws Exception {
        long start = System.currentTimeMillis();
        fault.inject(fleet);
        long end = System.currentTimeMillis();
        Thread.sleep(SETTLE_MILLIS); // the fleet recovers on its own; the next tick is read from the history after
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("fault", what);
        figures.put("lasted ms", end - start);
        long during = end / 1000 - start / 1000 - 1;
        figures.put("ticks not run while it lasted",
                Math.max(0, during - JobFleet.ticksRun(db, subject, start / 1000, end / 1000)));
        long next = db.queryLong("SELECT COALESCE(MIN(UNIX_TIMESTAMP(ran_at) * 1000), 0) FROM job_history"
                + " WHERE subject = ? AND ran_at > FROM_UNIXTIME(?)", subject, end / 1000.0);
        figures.put("next tick ran, ms after its end", next == 0 ? "none within " + SETTLE_MILLIS + " ms" : next - end);
        return figures;
    }

    /** The instance (0-based) that ran the subject's latest tick. */
    private int latestRunner(String subject) {
        return (int) db.queryLong("SELECT instance FROM job_history WHERE subject = ? ORDER BY id DESC LIMIT 1", subject)
                - 1;
    }

    private void killSessions(String user) throws SQLException {
        List<Long> sessions = new ArrayList<>();
        try (Connection connection = db.connect(); Statement statement = connection.createStatement()) {
            try (ResultSet rs = statement.executeQuery("SELECT ID FROM information_schema.PROCESSLIST WHERE USER = '"
                    + user + "'")) {
                while (rs.next()) {
                    sessions.add(rs.getLong(1));
                }
            }
            for (long session : sessions) {
                try {
                    statement.execute("KILL " + session);
                } catch (SQLException e) {
                    // it ended on its own meanwhile
                }
            }
        }
    }
}
