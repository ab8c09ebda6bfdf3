package io.quarkiverse.mysqllock.deployment.named;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Properties;
import java.util.function.Supplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import com.mysql.cj.MysqlConnection;
import com.mysql.cj.Query;
import com.mysql.cj.interceptors.QueryInterceptor;
import com.mysql.cj.log.Log;
import com.mysql.cj.protocol.Resultset;
import com.mysql.cj.protocol.ServerSession;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.runtime.named.NamedLockEngine;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A GET_LOCK or RELEASE_LOCK that fails in the driver, before the server answered (here a query interceptor throws;
 * the driver hands it on as an SQLException of its own, SQLSTATE S1000), leaves nothing behind: no connection stays
 * pinned, the name is free on the server, and the next acquisition works.
 */
class DriverErrorTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(FailNext.class);

    /**
     * Throws a RuntimeException, once, before the next statement whose text starts as armed. Armed through a system
     * property: the driver loads this class on a class loader of its own, whose copy shares no static field with the
     * test's.
     */
    public static final class FailNext implements QueryInterceptor {
        static final String ARMED = "mysql-lock.test.driver-fails-before";

        static void arm(String statementStart) {
            System.setProperty(ARMED, statementStart);
        }

        static String armed() {
            return System.getProperty(ARMED);
        }

        @Override
        public QueryInterceptor init(MysqlConnection connection, Properties properties, Log log) {
            return this;
        }

        @Override
        public <T extends Resultset> T preProcess(Supplier<String> sql, Query query) {
            String armed = armed();
            if (armed != null && sql.get() != null && sql.get().startsWith(armed)
                    && System.getProperties().remove(ARMED, armed)) {
                throw new IllegalStateException("the driver failed in the middle of " + armed);
            }
            return null;
        }

        @Override
        public boolean executeTopLevelOnly() {
            return false;
        }

        @Override
        public void destroy() {
        }

        @Override
        public <T extends Resultset> T postProcess(Supplier<String> sql, Query query, T originalResultSet,
                ServerSession serverSession) {
            return null;
        }
    }

    @AfterEach
    void disarm() {
        System.clearProperty(FailNext.ARMED);
    }

    private static StandaloneLocks ownConnectionsOnly(String id) {
        TestDatabase db = TestDatabase.shared();
        // no shared connections: every lock on a connection of its thread's own
        return StandaloneLocks.Settings.of(id).mode(Mode.NAMED).sharedConnections(0)
                .on(db.withUrl(db.jdbcUrl() + (db.jdbcUrl().contains("?") ? "&" : "?") + "queryInterceptors="
                        + FailNext.class.getName()))
                .start();
    }

    @Test
    void aGetLockThatFailsInTheDriverLeavesNoConnectionPinned() {
        try (StandaloneLocks instance = ownConnectionsOnly("driver-fails-get")) {
            NamedLockEngine engine = (NamedLockEngine) instance.locks.engine();
            FailNext.arm("SELECT GET_LOCK");
            try {
                instance.locks.acquire("driver:get", Duration.ofMillis(200)).release();
            } catch (RuntimeException e) {
                // a clear refusal is as good as a grant on a new connection; a pinned connection left behind is not
            }
            assertThat(FailNext.armed()).as("the driver failed once").isNull();
            assertThat(ServerState.holder("driver:get")).isEmpty();
            assertThat(engine.pinnedConnections()).as(engine.describePinned().toString()).isZero();
            instance.locks.acquire("driver:get", Duration.ZERO).release();
            assertThat(engine.pinnedConnections()).isZero();
        }
    }

    @Test
    void aReleaseThatFailsInTheDriverFreesTheNameAndReportsTheLoss() {
        try (StandaloneLocks instance = ownConnectionsOnly("driver-fails-release")) {
            NamedLockEngine engine = (NamedLockEngine) instance.locks.engine();
            LockHandle handle = instance.locks.acquire("driver:release", Duration.ZERO);
            FailNext.arm("SELECT RELEASE_LOCK");
            try {
                handle.release();
            } catch (RuntimeException e) {
                // the release may report what happened; the name must be free and nothing pinned
            }
            assertThat(FailNext.armed()).as("the driver failed once").isNull();
            LockApp.await("the name to be free on the server", Duration.ofSeconds(5),
                    () -> ServerState.holder("driver:release").isEmpty());
            assertThat(engine.pinnedConnections()).as(engine.describePinned().toString()).isZero();
            assertThat(instance.locks.held()).isEmpty();
        }
    }
}
