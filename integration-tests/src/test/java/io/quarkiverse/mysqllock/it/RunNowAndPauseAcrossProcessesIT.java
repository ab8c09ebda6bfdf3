package io.quarkiverse.mysqllock.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.test.AppProcess;
import io.quarkiverse.mysqllock.test.Await;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * Run-now and pause across a fleet of three processes, asked through the admin resource of one instance as an
 * operator would: a run-now runs once, on the instance asked, with the job's lock (busy elsewhere: skipped, and
 * recorded); a pause asked of one instance is obeyed by every instance from the next tick, and a resume likewise.
 */
class RunNowAndPauseAcrossProcessesIT {

    private static final String OPERATOR = "Basic "
            + Base64.getEncoder().encodeToString("operator:operator-secret".getBytes(StandardCharsets.UTF_8));
    /** A job every second ({@code ReportJob}), and the gate job, whose runs last until the test opens its gate. */
    private static final Map<String, String> SETTINGS = Map.of("lock-demo.cron", "*/1 * * * * ?");
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private static final List<AppProcess> FLEET = new ArrayList<>();
    private static final List<Integer> PORTS = new ArrayList<>();
    private static TestDatabase db;

    @BeforeAll
    static void startTheFleet() {
        db = TestDatabase.shared();
        db.execute("DROP TABLE IF EXISTS cron_history");
        db.execute("CREATE TABLE cron_history (id BIGINT AUTO_INCREMENT PRIMARY KEY, tick BIGINT NOT NULL,"
                + " instance VARCHAR(100) NOT NULL, ran_at TIMESTAMP(3) DEFAULT CURRENT_TIMESTAMP(3))");
        db.execute("DROP TABLE IF EXISTS gate_history");
        db.execute("CREATE TABLE gate_history (id BIGINT AUTO_INCREMENT PRIMARY KEY, kind VARCHAR(16) NOT NULL,"
                + " instance VARCHAR(100) NOT NULL, started_at TIMESTAMP(6) NOT NULL, ended_at TIMESTAMP(6) NULL)");
        db.execute("DROP TABLE IF EXISTS job_gate");
        db.execute("CREATE TABLE job_gate (id INT PRIMARY KEY, open BOOLEAN NOT NULL)");
        db.execute("INSERT INTO job_gate VALUES (1, FALSE)");
        JobRows.forget(db, "cron:report");
        JobRows.forget(db, "cron:gate");
        for (int i = 1; i <= 3; i++) {
            AppProcess process = Workers.start(db, "fleet-" + i, SETTINGS, null);
            FLEET.add(process);
            PORTS.add(Workers.httpPort(process));
        }
    }

    @AfterAll
    static void stopTheFleet() {
        db.execute("UPDATE job_gate SET open = TRUE"); // a run a failed test left waiting ends
        FLEET.forEach(AppProcess::close);
    }

    @Test
    void aRunNowRunsOnceOnTheInstanceAskedWithTheJobsLock() {
        assertThat(post(1, "cron:gate", "run-now").statusCode()).isEqualTo(202);
        Await.until("the run asked of fleet-2 to start", Duration.ofSeconds(60),
                () -> db.queryLong("SELECT COUNT(*) FROM gate_history") == 1);
        assertThat(db.queryLong("SELECT COUNT(*) FROM gate_history WHERE instance = 'fleet-2' AND kind = 'run_now'"))
                .as("runs now on fleet-2").isEqualTo(1);

        // its lock held there, a run-now asked of each other instance finds it busy: skipped, recorded, not run
        assertThat(post(0, "cron:gate", "run-now").statusCode()).isEqualTo(202);
        assertThat(post(2, "cron:gate", "run-now").statusCode()).isEqualTo(202);
        Await.until("the two runs asked while it lasts to be skipped", Duration.ofSeconds(60),
                () -> runs("cron:gate", "RUN_NOW", "SKIPPED_BUSY") == 2);
        assertThat(db.queryLong("SELECT COUNT(*) FROM mysql_lock_run WHERE name = 'cron:gate' AND kind = 'RUN_NOW'"
                + " AND outcome = 'SKIPPED_BUSY' AND (instance LIKE '%/fleet-1' OR instance LIKE '%/fleet-3')"))
                .as("the history names the instances asked (host/pid/instance-id)").isEqualTo(2);
        assertThat(db.queryLong("SELECT COUNT(*) FROM gate_history")).as("runs started").isEqualTo(1);

        db.execute("UPDATE job_gate SET open = TRUE");
        Await.until("the run on fleet-2 to end", Duration.ofSeconds(60),
                () -> runs("cron:gate", "RUN_NOW", "SUCCEEDED") == 1);
        assertThat(db.queryLong("SELECT COUNT(*) FROM mysql_lock_run WHERE name = 'cron:gate'"
                + " AND outcome = 'SUCCEEDED' AND instance LIKE '%/fleet-2'")).isEqualTo(1);

        // asked of every instance at once: each request ends once, as a run or a skip, and no two runs overlap
        List<CompletableFuture<HttpResponse<String>>> asked = new ArrayList<>();
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 3; i++) {
                asked.add(HTTP.sendAsync(request(i, "cron:gate", "run-now"), HttpResponse.BodyHandlers.ofString()));
            }
        }
        asked.forEach(response -> assertThat(response.join().statusCode()).isEqualTo(202));
        Await.until("every run asked for to end", Duration.ofSeconds(60),
                () -> db.queryLong("SELECT COUNT(*) FROM mysql_lock_run WHERE name = 'cron:gate'"
                        + " AND outcome <> 'RUNNING'") == 3 + asked.size());
        long ran = runs("cron:gate", "RUN_NOW", "SUCCEEDED");
        assertThat(ran).as("runs now that ran").isGreaterThanOrEqualTo(2);
        assertThat(db.queryLong("SELECT COUNT(*) FROM gate_history WHERE ended_at IS NOT NULL"))
                .as("runs of the job, as it saw them").isEqualTo(ran);
        assertThat(runs("cron:gate", "RUN_NOW", "SKIPPED_BUSY")).as("runs now skipped").isEqualTo(3 + asked.size() - ran);
        assertThat(db.queryLong("SELECT COUNT(*) FROM gate_history a JOIN gate_history b ON a.id < b.id"
                + " AND a.started_at < b.ended_at AND b.started_at < a.ended_at")).as("runs that overlapped").isZero();
        assertThat(db.queryLong("SELECT COUNT(*) FROM mysql_lock_audit WHERE target = 'cron:gate'"
                + " AND action = 'RUN_NOW' AND actor = 'operator'")).as("run-now requests audited")
                .isEqualTo(3 + asked.size());
    }

    @Test
    void aPauseAskedOfOneInstanceIsObeyedByEveryInstanceFromTheNextTick() {
        Await.until("three ticks to run", Duration.ofSeconds(60),
                () -> db.queryLong("SELECT COUNT(DISTINCT tick) FROM cron_history") >= 3);

        HttpResponse<String> paused = post(0, "cron:report", "pause");
        // every tick scheduled after the answer fires after the pause committed
        long pausedAt = System.currentTimeMillis() / 1000;
        assertThat(paused.statusCode()).as(paused.body()).isEqualTo(200);
        assertThat(paused.body()).contains("\"state\":\"PAUSED\"");
        Await.until("three ticks to be skipped as paused", Duration.ofSeconds(60),
                () -> db.queryLong("SELECT COUNT(*) FROM mysql_lock_run WHERE name = 'cron:report'"
                        + " AND outcome = 'SKIPPED_PAUSED' AND tick > " + pausedAt * 1000) >= 3);
        assertThat(db.queryLong("SELECT COUNT(*) FROM cron_history WHERE tick > " + pausedAt))
                .as("ticks run after the pause").isZero();

        HttpResponse<String> resumed = post(2, "cron:report", "resume");
        long resumedAt = System.currentTimeMillis() / 1000;
        assertThat(resumed.statusCode()).as(resumed.body()).isEqualTo(200);
        Await.until("three ticks to run after the resume", Duration.ofSeconds(60),
                () -> db.queryLong("SELECT COUNT(*) FROM cron_history WHERE tick > " + resumedAt) >= 3);
        assertThat(db.queryLong("SELECT COUNT(*) FROM mysql_lock_run WHERE name = 'cron:report'"
                + " AND outcome = 'SKIPPED_PAUSED' AND tick > " + resumedAt * 1000)).as("ticks skipped after the resume")
                .isZero();
        assertThat(db.queryLong("SELECT COUNT(*) FROM (SELECT tick FROM cron_history GROUP BY tick"
                + " HAVING COUNT(*) > 1) twice")).as("ticks that ran twice").isZero();
        assertThat(db.queryLong("SELECT COUNT(*) FROM (SELECT tick FROM mysql_lock_run WHERE name = 'cron:report'"
                + " GROUP BY tick HAVING COUNT(*) > 1) twice")).as("ticks recorded twice").isZero();
        assertThat(db.queryLong("SELECT COUNT(*) FROM mysql_lock_audit WHERE target = 'cron:report'"
                + " AND action IN ('PAUSE', 'RESUME') AND actor = 'operator'")).as("changes audited").isEqualTo(2);
    }

    private static long runs(String job, String kind, String outcome) {
        return db.queryLong("SELECT COUNT(*) FROM mysql_lock_run WHERE name = ? AND kind = ? AND outcome = ?", job, kind,
                outcome);
    }

    private static HttpResponse<String> post(int instance, String job, String action) {
        try {
            return HTTP.send(request(instance, job, action), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static HttpRequest request(int instance, String job, String action) {
        return HttpRequest.newBuilder(URI.create("http://localhost:" + PORTS.get(instance) + "/mysql-lock/admin/jobs/"
                + URLEncoder.encode(job, StandardCharsets.UTF_8) + "/" + action + "?reason=test"))
                .header("Authorization", OPERATOR).POST(HttpRequest.BodyPublishers.noBody())
                .timeout(Duration.ofSeconds(60)).build();
    }
}
