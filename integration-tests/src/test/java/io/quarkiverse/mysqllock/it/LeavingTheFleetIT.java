package io.quarkiverse.mysqllock.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.test.AppProcess;
import io.quarkiverse.mysqllock.test.Await;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * An instance stopped as a deployment stops it (SIGTERM) leaves its fleet: its membership ends as it stops, not a ttl
 * later, so that a fleet whose every instance stopped may change engine at once. Quarkus ends the datasources with its
 * beans: the membership must end before.
 */
class LeavingTheFleetIT {

    private static final String TABLE = "leaving_locks";

    @Test
    void aStoppedInstanceEndsItsMembershipAndTheFleetMayChangeEngineAtOnce() {
        TestDatabase db = TestDatabase.shared();
        db.execute("DROP TABLE IF EXISTS " + TABLE);
        AppProcess lease = start(db, "leaving-lease", "lease");
        long live = members(db);
        lease.close();
        assertThat(live).as("the LEASE instance's membership while it ran").isEqualTo(1);
        assertThat(members(db)).as("memberships left once it stopped").isZero();

        // the fleet's only instance stopped: one of the other engine joins at once, without waiting for a ttl
        AppProcess named = start(db, "leaving-named", "named");
        try {
            assertThat(named.lines()).as("the NAMED instance's start")
                    .noneMatch(line -> line.contains("Waiting up to"));
        } finally {
            named.close();
        }
        assertThat(members(db)).isZero();
    }

    private static AppProcess start(TestDatabase db, String instance, String mode) {
        AppProcess process = Workers.start(db, instance, Map.of("quarkus.mysql-lock.table", TABLE,
                "quarkus.mysql-lock.mode", mode), null);
        process.awaitLine(line -> line.contains("Installed features"), Duration.ofSeconds(90));
        Await.until(instance + "'s membership", Duration.ofSeconds(30), () -> members(db) == 1);
        return process;
    }

    /** The memberships not ended: rows of live instances, with an owner. */
    private static long members(TestDatabase db) {
        return db.queryLong("SELECT COUNT(*) FROM " + TABLE + " WHERE name LIKE '~live%' AND owner IS NOT NULL"
                + " AND expires_at > UTC_TIMESTAMP(6)");
    }
}
