package io.quarkiverse.mysqllock.deployment.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.BeforeDestroyed;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkus.test.QuarkusUnitTest;

/**
 * An application that stops ends its fleet membership, so that the fleet may change engine at once: a membership left
 * behind counts as a running instance until its ttl, and an instance started meanwhile with the other engine is
 * refused (a LEASE test application that stopped made a NAMED one started right after it fail). It must end before
 * Quarkus ends its beans: the datasources end with them, in an order ArC does not fix, and the lock manager left the
 * fleet only as its bean ended, so it could find its datasource closed and leave its membership to expire.
 */
class LeavesTheFleetAtStopTest {

    static final String TABLE = "leave_at_stop_lock";
    /** Where the application's last look goes: a system property, since the test sees its classes in another loader. */
    static final String AS_BEANS_END = "leave-at-stop.members-as-beans-end";
    static final String LOCK_AS_BEANS_END = "leave-at-stop.lock-as-beans-end";

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(AsBeansEnd.class)
            .overrideRuntimeConfigKey("quarkus.mysql-lock.mode", "lease")
            .overrideRuntimeConfigKey("quarkus.mysql-lock.table", TABLE)
            .setAfterUndeployListener(() -> {
                assertThat(System.getProperty(AS_BEANS_END))
                        .as("live memberships in " + TABLE + " as Quarkus began to end its beans").isEqualTo("0");
                assertThat(liveMembers()).as("live memberships in " + TABLE + " once the application stopped").isZero();
                assertThat(System.getProperty(LOCK_AS_BEANS_END)).as("a lock asked for as the beans end")
                        .isEqualTo("IllegalStateException: The lock manager is shut down");
            });

    @Inject
    LockManager locks;

    @Test
    void aRunningInstanceIsAMember() {
        assertThat(locks.mode()).isEqualTo(LockMode.LEASE);
        assertThat(liveMembers()).as("live memberships while it runs").isOne();
    }

    /** Looks as Quarkus begins to end its beans, after the shutdown's observers. */
    @Singleton
    static class AsBeansEnd {

        @Inject
        LockManager locks;

        void look(@Observes @BeforeDestroyed(ApplicationScoped.class) Object event) {
            System.setProperty(AS_BEANS_END, String.valueOf(liveMembers()));
            try {
                locks.acquire("late", Duration.ZERO).release();
                System.setProperty(LOCK_AS_BEANS_END, "granted");
            } catch (RuntimeException e) {
                System.setProperty(LOCK_AS_BEANS_END, e.getClass().getSimpleName() + ": " + e.getMessage());
            }
        }
    }

    static long liveMembers() {
        return ServerState.queryLong("SELECT COUNT(*) FROM " + TABLE
                + " WHERE name LIKE '~live%' AND owner IS NOT NULL AND expires_at > UTC_TIMESTAMP(6)");
    }
}
