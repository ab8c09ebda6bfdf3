package io.quarkiverse.mysqllock.it;

import java.util.Map;

import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.testing.EmbeddedMariaDb;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/** The same tests on the LEASE engine, with a 2 s ttl (fenced commits on, as for the base class). */
@QuarkusTest
@EmbeddedMariaDb
@TestProfile(TestKitLeaseTest.Profile.class)
class TestKitLeaseTest extends TestKitTest {

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("quarkus.mysql-lock.mode", "lease", "quarkus.mysql-lock.lease.ttl", "2s",
                    "quarkus.mysql-lock.table", "kit_lock", "quarkus.mysql-lock.fenced-commit", "true");
        }
    }

    @Override
    LockMode expectedEngine() {
        return LockMode.LEASE;
    }
}
