package io.quarkiverse.mysqllock.deployment.named;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.table.LockTable;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/**
 * An ordinary SQL error of one holder's statement on a shared session fails that call, not the locks of the session's
 * co-tenants; and a statement that waits for a row lock never holds the shared session while it waits. (Any error on a
 * shared session used to fail every lock on it, and a fencing token waiting up to 50 s for a row locked by a
 * transaction blocked every co-tenant's release meanwhile.)
 */
class SharedSessionErrorsTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Test
    void aFencingTokenWaitingForALockedRowBlocksNoCoTenant() throws Exception {
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("cotenants").sharedConnections(1).start()) {
            // both locks on the one shared session
            LockHandle a = Background.supply(() -> instance.locks.acquire("cotenant:a", Duration.ZERO)).get();
            LockHandle b = Background.supply(() -> instance.locks.acquire("cotenant:b", Duration.ZERO)).get();
            assertThat(ServerState.holder("cotenant:a")).isEqualTo(ServerState.holder("cotenant:b"));
            CopyOnWriteArrayList<LockLostException> lost = new CopyOnWriteArrayList<>();
            a.onLost(lost::add);
            b.onLost(lost::add);
            ServerState.update(new LockTable("mysql_lock", true).ddl());
            ServerState.update("INSERT IGNORE INTO mysql_lock (name, fence) VALUES ('cotenant:b', 0)");
            try (Connection transaction = TestDatabase.shared().connect();
                    Statement statement = transaction.createStatement()) {
                transaction.setAutoCommit(false);
                statement.executeQuery("SELECT fence FROM mysql_lock WHERE name = 'cotenant:b' FOR UPDATE").close();
                CompletableFuture<Long> token = Background.supply(b::fencingToken);
                LockApp.await("the fence update to wait for the row", Duration.ofSeconds(30), () -> ServerState.queryLong(
                        "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'UPDATE mysql_lock SET fence%'") > 0);

                // the co-tenant releases at once, and keeps nothing lost: the fence update still waits for the row
                // when the release is done (a release that waited for it would return only once it ended), however
                // long a busy machine makes the release
                Background.run(a::release).get(20, TimeUnit.SECONDS);
                assertThat(token).as("the fence update, when the co-tenant's release returned").isNotDone();
                assertThat(ServerState.holder("cotenant:a")).isEmpty();
                transaction.commit();
                assertThat(token.get(10, TimeUnit.SECONDS)).isPositive();
            }
            assertThat(b.isValid()).isTrue();
            b.release();
            assertThat(lost).isEmpty();
        }
    }

    @Test
    void aRefusedStatementFailsItsCallNotTheCoTenantsLocks() throws Exception {
        TestDatabase server = TestDatabase.startEmbedded();
        try {
            try (Connection root = server.connect(); Statement statement = root.createStatement()) {
                statement.execute(new LockTable("mysql_lock", true).ddl());
                statement.execute("FLUSH PRIVILEGES");
                statement.execute("CREATE USER 'nofence'@'%' IDENTIFIED BY 'nofence'");
                // may take named locks and join the fleet, but not move a fence: no fencing token
                statement.execute("GRANT SELECT, INSERT ON locktest.mysql_lock TO 'nofence'@'%'");
                statement.execute("GRANT UPDATE (owner, acquired_at, expires_at) ON locktest.mysql_lock TO 'nofence'@'%'");
            }
            try (StandaloneLocks instance = StandaloneLocks.Settings.of("nofence").on(server.as("nofence", "nofence"))
                    .sharedConnections(1).start()) {
                LockHandle a = Background.supply(() -> instance.locks.acquire("refused:a", Duration.ZERO)).get();
                LockHandle b = Background.supply(() -> instance.locks.acquire("refused:b", Duration.ZERO)).get();
                CopyOnWriteArrayList<LockLostException> lost = new CopyOnWriteArrayList<>();
                a.onLost(lost::add);
                b.onLost(lost::add);
                assertThatThrownBy(b::fencingToken).isNotInstanceOf(LockLostException.class)
                        .hasMessageContaining("refused:b").hasMessageContaining("UPDATE command denied");
                assertThat(a.isValid()).isTrue();
                assertThat(b.isValid()).isTrue();
                a.release();
                b.release();
                assertThat(lost).isEmpty();
            }
        } finally {
            server.stop();
        }
    }
}
