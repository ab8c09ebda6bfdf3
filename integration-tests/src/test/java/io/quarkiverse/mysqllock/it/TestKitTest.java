package io.quarkiverse.mysqllock.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.testing.EmbeddedMariaDb;
import io.quarkiverse.mysqllock.testing.LockAssert;
import io.quarkiverse.mysqllock.testing.LockFaults;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/**
 * The test kit (quarkus-mysql-lock-test) as users use it, on the NAMED engine (the application's own choice on one
 * server): faults made as the real failures are, and the assertions. {@link TestKitLeaseTest} runs the same on LEASE,
 * {@link TestKitInMemoryTest} on the in-memory engine.
 */
@QuarkusTest
@EmbeddedMariaDb
@TestProfile(TestKitTest.Profile.class)
class TestKitTest {

    /** Fenced commits on: {@link #aLockGrantedElsewhereRollsBackTheTransactionThatRanUnderIt}. */
    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("quarkus.mysql-lock.fenced-commit", "true");
        }
    }

    @Inject
    LockManager locks;

    @Inject
    LockFaults faults;

    @Inject
    OrderResource orders;

    @Inject
    AgroalDataSource dataSource;

    /**
     * A lock granted elsewhere while a transaction runs under it (as after a pause past its lease): with fenced commits
     * ({@code quarkus.mysql-lock.fenced-commit=true}) the transaction rolls back, and the caller is told.
     */
    @Test
    void aLockGrantedElsewhereRollsBackTheTransactionThatRanUnderIt() throws Exception {
        execute("CREATE TABLE IF NOT EXISTS kit_fenced (name VARCHAR(100) PRIMARY KEY)");
        assertThatThrownBy(() -> QuarkusTransaction.requiringNew().run(() -> locks.withLock("kit:stale",
                Duration.ZERO, () -> {
                    execute("INSERT INTO kit_fenced VALUES ('kit:stale')");
                    faults.grantElsewhere("kit:stale");
                    return null;
                }))).isInstanceOf(LockLostException.class).hasMessageContaining("kit:stale");
        assertThat(count("kit:stale")).as("rows the transaction wrote").isZero();
        locks.withLock("kit:stale", Duration.ofSeconds(10), () -> null); // the name can be had again
    }

    /** {@code LockManager.fence} on a transaction run by hand (plain JDBC). */
    @Test
    void fenceRefusesAHandRunTransactionOnceTheLockWasGrantedElsewhere() throws Exception {
        execute("CREATE TABLE IF NOT EXISTS kit_fenced (name VARCHAR(100) PRIMARY KEY)");
        try (LockHandle lock = locks.acquire("kit:by-hand", Duration.ZERO);
                Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(false);
            try (Statement statement = connection.createStatement()) {
                statement.executeUpdate("INSERT INTO kit_fenced VALUES ('kit:by-hand')");
            }
            faults.grantElsewhere("kit:by-hand");
            assertThatThrownBy(() -> locks.fence(lock, connection)).isInstanceOf(LockLostException.class);
            connection.rollback();
        }
        assertThat(count("kit:by-hand")).isZero();
    }

    private void execute(String sql) {
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private long count(String name) throws SQLException {
        try (Connection connection = dataSource.getConnection();
                Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT COUNT(*) FROM kit_fenced WHERE name = '" + name + "'")) {
            rows.next();
            return rows.getLong(1);
        }
    }

    @Test
    void theApplicationRunsOnTheEngineUnderTest() {
        assertThat(faults.engine()).isEqualTo(expectedEngine());
    }

    @Test
    void aLostLockTellsItsHolder() throws Exception {
        CompletableFuture<LockLostException> told = new CompletableFuture<>();
        LockHandle handle = locks.acquire("kit:lose", Duration.ZERO).onLost(told::complete);
        faults.loseLock("kit:lose");
        assertThat(told.get(10, TimeUnit.SECONDS).lockName()).isEqualTo("kit:lose");
        assertThat(handle.isValid()).isFalse();
        handle.release();
        // the name is free again: the next holder gets it, with a greater fencing token
        try (LockHandle next = locks.acquire("kit:lose", Duration.ofSeconds(5))) {
            assertThat(next.isValid()).isTrue();
        }
        LockAssert.assertNoLockHeld();
    }

    @Test
    void losingALockNobodyHoldsIsRefused() {
        assertThatThrownBy(() -> faults.loseLock("kit:nobody")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("kit:nobody");
    }

    @Test
    void aBusyNameRefusesTheApplicationUntilReleased() {
        long busyToken;
        try (LockFaults.Busy busy = faults.makeBusy("kit:busy")) {
            busyToken = busy.fencingToken();
            assertThat(locks.tryAcquire("kit:busy")).isEmpty();
            assertThatThrownBy(() -> locks.acquire("kit:busy", Duration.ZERO))
                    .isInstanceOfSatisfying(LockNotAcquiredException.class,
                            e -> assertThat(e.reason()).isEqualTo(LockNotAcquiredException.Reason.BUSY));
            assertThatThrownBy(() -> faults.makeBusy("kit:busy")).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("held already");
        }
        try (LockHandle handle = locks.acquire("kit:busy", Duration.ZERO)) {
            assertThat(handle.fencingToken()).isGreaterThan(busyToken);
        }
    }

    @Test
    void assertRunsUnderLockSeesTheLockOfALockedMethod() throws Exception {
        assertThat(LockAssert.assertRunsUnderLock("order:kit-1", () -> orders.ship("kit-1", 0, null)))
                .containsEntry("order", "kit-1");
        assertThatThrownBy(() -> LockAssert.assertRunsUnderLock("order:kit-2", () -> orders.ship("kit-3", 0, null)))
                .isInstanceOf(AssertionError.class).hasMessageContaining("order:kit-2").hasMessageContaining("order:kit-3");
        assertThatThrownBy(() -> LockAssert.assertRunsUnderLock("order:kit-2", () -> "no lock"))
                .isInstanceOf(AssertionError.class).hasMessageContaining("no lock");
    }

    @Test
    void assertNoLockHeldNamesWhatIsHeld() {
        try (LockHandle handle = locks.acquire("kit:left", Duration.ZERO)) {
            LockAssert.assertHeld("kit:left");
            assertThatThrownBy(LockAssert::assertNoLockHeld).isInstanceOf(AssertionError.class)
                    .hasMessageContaining("kit:left");
        }
        LockAssert.assertNoLockHeld();
        assertThatThrownBy(() -> LockAssert.assertHeld("kit:left")).isInstanceOf(AssertionError.class);
    }

    @Test
    void pausedRenewalsCostTheLeasesOnLeaseAndNothingOnNamed() throws Exception {
        CompletableFuture<LockLostException> told = new CompletableFuture<>();
        LockHandle handle = locks.acquire("kit:paused", Duration.ZERO).onLost(told::complete);
        try (LockFaults.Pause pause = faults.pauseRenewals()) {
            if (expectedEngine() == LockMode.LEASE) {
                // the ttl (2 s) runs out without a renewal: the holder sees it by its own clock
                assertThat(told.get(10, TimeUnit.SECONDS).lockName()).isEqualTo("kit:paused");
                assertThat(handle.isValid()).isFalse();
            } else {
                // the server keeps a live session's named lock without keepalives
                assertThat(handle.isValid()).isTrue();
                assertThat(locks.holders()).anyMatch(info -> info.name().equals("kit:paused"));
            }
        }
        handle.release();
    }

    LockMode expectedEngine() {
        return LockMode.NAMED;
    }
}
