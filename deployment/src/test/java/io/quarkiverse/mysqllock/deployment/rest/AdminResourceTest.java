package io.quarkiverse.mysqllock.deployment.rest;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.Ticks;
import io.quarkiverse.mysqllock.jobs.JobState;
import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.test.QuarkusUnitTest;

/**
 * {@code quarkus.mysql-lock.admin.enabled=true}: the admin resource through real HTTP calls, with users of the
 * configuration: a user without the role is refused (403), an anonymous caller too (401); a user with it reads the
 * jobs, pauses, resumes and runs one now, lists the holders and releases a lease by force, each change in the audit
 * trail under the user's name.
 */
class AdminResourceTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Job.class, Ticks.class)
            .overrideConfigKey("quarkus.mysql-lock.admin.enabled", "true")
            .overrideConfigKey("quarkus.mysql-lock.mode", "lease")
            .overrideConfigKey("quarkus.mysql-lock.table", "admin_locks")
            .overrideConfigKey("quarkus.http.auth.basic", "true")
            .overrideConfigKey("quarkus.security.users.embedded.enabled", "true")
            .overrideConfigKey("quarkus.security.users.embedded.plain-text", "true")
            .overrideConfigKey("quarkus.security.users.embedded.users.alice", "secret")
            .overrideConfigKey("quarkus.security.users.embedded.roles.alice", "mysql-lock-admin")
            .overrideConfigKey("quarkus.security.users.embedded.users.bob", "secret")
            .overrideConfigKey("quarkus.security.users.embedded.roles.bob", "user");

    @Inject
    Job job;

    @Inject
    LockManager locks;

    @Test
    void onlyTheRoleMayCallIt() {
        given().when().get("/mysql-lock/admin/jobs").then().statusCode(401);
        given().auth().preemptive().basic("bob", "secret").when().get("/mysql-lock/admin/jobs").then().statusCode(403);
        given().auth().preemptive().basic("bob", "secret").when().post("/mysql-lock/admin/jobs/admin:job/pause").then()
                .statusCode(403);
        given().auth().preemptive().basic("alice", "secret").when().get("/mysql-lock/admin/jobs").then()
                .statusCode(200);
    }

    @Test
    void aJobIsPausedResumedAndRunNowUnderTheUsersName() {
        job.run(Ticks.at(1_000));
        given().auth().preemptive().basic("alice", "secret").when().get("/mysql-lock/admin/jobs").then()
                .statusCode(200).body("name", hasItem("admin:job"));
        given().auth().preemptive().basic("alice", "secret").queryParam("reason", "maintenance").when()
                .post("/mysql-lock/admin/jobs/admin:job/pause").then().statusCode(200).body("state", equalTo("PAUSED"));
        assertThat(locks.jobs().job("admin:job").orElseThrow().state()).isEqualTo(JobState.PAUSED);
        given().auth().preemptive().basic("alice", "secret").when().post("/mysql-lock/admin/jobs/admin:job/enable")
                .then().statusCode(409).body("error", containsString("resume it"));
        given().auth().preemptive().basic("alice", "secret").when().post("/mysql-lock/admin/jobs/admin:job/resume")
                .then().statusCode(200).body("state", equalTo("ACTIVE"));
        given().auth().preemptive().basic("alice", "secret").when().post("/mysql-lock/admin/jobs/admin:job/run-now")
                .then().statusCode(202).body("running", equalTo(true));
        LockApp.await("the run-now in the history", java.time.Duration.ofSeconds(30), () -> locks.jobs()
                .history("admin:job", 5).stream().anyMatch(run -> run.kind().name().equals("RUN_NOW")
                        && run.outcome().ended()));
        given().auth().preemptive().basic("alice", "secret").when().get("/mysql-lock/admin/jobs/admin:job/changes")
                .then().statusCode(200).body("action", equalTo(java.util.List.of("RUN_NOW", "RESUME", "PAUSE")))
                .body("by", equalTo(java.util.List.of("alice", "alice", "alice")))
                .body("why[2]", equalTo("maintenance"));
        given().auth().preemptive().basic("alice", "secret").when().get("/mysql-lock/admin/jobs/admin:job/history")
                .then().statusCode(200).body("kind", hasItem("RUN_NOW"));
        given().auth().preemptive().basic("alice", "secret").when().post("/mysql-lock/admin/jobs/admin:nothing/pause")
                .then().statusCode(404).body("error", containsString("no job 'admin:nothing'"));
        given().auth().preemptive().basic("alice", "secret").when().post("/mysql-lock/admin/jobs/admin:job/explode")
                .then().statusCode(404).body("error", containsString("No action 'explode'"));
        given().auth().preemptive().basic("alice", "secret").when().get("/mysql-lock/admin/jobs?datasource=orders")
                .then().statusCode(404).body("error", containsString("datasource 'orders'"));
    }

    @Test
    void holdersAreListedAndALeaseIsReleasedByForceUnderTheUsersName() {
        try (LockHandle held = locks.acquire("admin:held")) {
            given().auth().preemptive().basic("alice", "secret").when().get("/mysql-lock/admin/locks").then()
                    .statusCode(200).body("name", hasItem("admin:held"));
            given().auth().preemptive().basic("alice", "secret").queryParam("reason", "stuck").when()
                    .delete("/mysql-lock/admin/locks/admin:held").then().statusCode(200)
                    .body("released", equalTo(true));
            LockApp.await("the holder to learn it lost the lease", java.time.Duration.ofSeconds(30),
                    () -> !held.isValid());
        }
        given().auth().preemptive().basic("alice", "secret").when().delete("/mysql-lock/admin/locks/admin:held")
                .then().statusCode(404);
        assertThat(ServerState.queryString("SELECT GROUP_CONCAT(CONCAT(action, ' ', actor, ' ', COALESCE(reason, '-'),"
                + " ' ', detail) ORDER BY id SEPARATOR ', ') FROM admin_locks_audit WHERE target = 'admin:held'"))
                .isEqualTo("FORCE_RELEASE alice stuck released, FORCE_RELEASE alice - no lease held");
    }

    @ApplicationScoped
    public static class Job {

        @Locked(value = "admin:job", onBusy = OnBusy.SKIP)
        public void run(ScheduledExecution execution) {
        }
    }
}
