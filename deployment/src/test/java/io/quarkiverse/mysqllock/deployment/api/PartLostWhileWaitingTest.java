package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.test.Await;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.runtime.BlockingOperationControl;
import io.quarkus.runtime.IOThreadDetector;

/**
 * All or none: a lock taken first can be lost while the later ones are waited for (its session killed, then taken by
 * someone else). {@code acquireAll} and a read-write lock's writer (its gate, then every read permit) never return a
 * handle with a part that is known lost: they give everything back and take the whole set again. Before, they returned
 * as if they held everything, and only {@code isValid()} said otherwise.
 */
class PartLostWhileWaitingTest {

    static final Duration KEEPALIVE = Duration.ofMillis(300);

    @BeforeAll
    static void outsideAnyEventLoop() {
        BlockingOperationControl.setIoThreadDetector(new IOThreadDetector[0]);
    }

    @Test
    void acquireAllReturnsOnlyWithEveryPartHeld() throws Exception {
        try (StandaloneLocks instance = named("all-or-none"); Connection other = TestDatabase.shared().connect()) {
            assertThat(getLock(other, "lost-part:b")).isTrue();
            CompletableFuture<LockHandle> all = Background
                    .supply(() -> instance.locks.acquireAll(List.of("lost-part:a", "lost-part:b"), Duration.ofSeconds(30)));
            Await.until("'a' taken and 'b' waited for", Duration.ofSeconds(10),
                    () -> ServerState.holder("lost-part:a").isPresent() && ServerState.waitingInGetLock() > 0);

            loseToAnotherHolder(instance, other, "lost-part:a");
            assertThat(releaseLock(other, "lost-part:b")).isTrue();
            assertThat(releaseLock(other, "lost-part:a")).isTrue();

            LockHandle handle = all.get(20, TimeUnit.SECONDS);
            try {
                assertThat(handle.isValid()).as("every part valid").isTrue();
                assertThat(handle.parts()).allMatch(LockHandle::isValid);
                assertThat(ServerState.holder("lost-part:a")).as("'a' held on the server").isPresent();
                assertThat(ServerState.holder("lost-part:b")).as("'b' held on the server").isPresent();
            } finally {
                handle.release();
            }
        }
    }

    @Test
    void aWriterReturnsOnlyWithItsGateHeld() throws Exception {
        try (StandaloneLocks instance = named("writer-gate"); Connection other = TestDatabase.shared().connect()) {
            LockHandle reader = instance.locks.readWriteLock("lost-gate").acquireRead(Duration.ZERO);
            CompletableFuture<Optional<LockHandle>> writer = Background
                    .supply(() -> instance.locks.readWriteLock("lost-gate").tryAcquireWrite(Duration.ofSeconds(30)));
            Await.until("the writer keeping the gate and waiting for the reader", Duration.ofSeconds(10),
                    () -> ServerState.holder("lost-gate#rw-gate").isPresent() && ServerState.waitingInGetLock() > 0);

            loseToAnotherHolder(instance, other, "lost-gate#rw-gate");
            reader.release();
            assertThat(releaseLock(other, "lost-gate#rw-gate")).isTrue();

            LockHandle write = writer.get(20, TimeUnit.SECONDS).orElseThrow();
            try {
                assertThat(write.isValid()).isTrue();
                assertThat(write.parts()).allMatch(LockHandle::isValid);
                assertThat(ServerState.holder("lost-gate#rw-gate")).as("the gate held on the server").isPresent();
            } finally {
                write.release();
            }
        }
    }

    /**
     * One shared session for every lock held (waits pin sessions of their own): the session killed to lose a part holds
     * the other parts too, and the reader's permit, as it did by chance on a loaded machine, so the instance learns of
     * the loss at once and takes the part again at once.
     */
    private static StandaloneLocks named(String id) {
        return StandaloneLocks.Settings.of(id).mode(Mode.NAMED).keepalive(KEEPALIVE).sharedConnections(1).start();
    }

    /**
     * The server ends the session holding the lock, another client takes it, and the instance learns of the loss (its
     * keepalive, or at once when the end also freed what it waited for): the lock is known lost, and held by someone
     * else. The other client waits for the name before the session ends, so the server hands it over to that client:
     * the instance, taking the part again at once, finds it held. (Waiting for the name to be seen free, then taking
     * it, lost that race on a loaded machine: the instance had taken it again in between.)
     */
    private static void loseToAnotherHolder(StandaloneLocks instance, Connection other, String name) throws Exception {
        long waiting = ServerState.waitingInGetLock();
        CompletableFuture<Boolean> taken = Background.supply(() -> {
            try {
                return booleanOf(other, "SELECT GET_LOCK(?, 60)", name);
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        });
        Await.until("the other client waiting for '" + name + "'", Duration.ofSeconds(10),
                () -> ServerState.waitingInGetLock() > waiting);
        TestDatabase.shared().kill(ServerState.holder(name).orElseThrow());
        assertThat(taken.get(30, TimeUnit.SECONDS)).as("'" + name + "' handed over to the other client").isTrue();
        Await.until("the loss of '" + name + "' known to the instance", Duration.ofSeconds(10),
                () -> instance.locks.held().stream().map(LockInfo::name).noneMatch(name::equals));
    }

    private static boolean getLock(Connection connection, String name) throws SQLException {
        return booleanOf(connection, "SELECT GET_LOCK(?, 0)", name);
    }

    private static boolean releaseLock(Connection connection, String name) throws SQLException {
        return booleanOf(connection, "SELECT RELEASE_LOCK(?)", name);
    }

    private static boolean booleanOf(Connection connection, String sql, String name) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setString(1, name);
            try (ResultSet rs = statement.executeQuery()) {
                return rs.next() && rs.getInt(1) == 1;
            }
        }
    }
}
