package io.quarkiverse.mysqllock.deployment.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Locale;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkus.test.QuarkusUnitTest;

/**
 * What an uncontended acquire and release costs the server, counted by the server itself (its {@code Questions}: the
 * statements clients sent): the single-lock path's floor is one statement to take the lock and one to give it back, on
 * each engine. Timing cannot tell a round trip added to the path on a busy machine; this count can, and a change that
 * adds one fails here until this test is changed on purpose. The count is taken over many cycles, so that the
 * engines' periodic work (keepalives and renewals, seconds apart) weighs less than one statement per cycle.
 */
class StatementsPerLockTest {

    static final int CYCLES = 400;
    /** The engines' own periodic statements that may fall in the count: far fewer than one per cycle. */
    static final int BACKGROUND = 40;

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Test
    void namedTakesAndGivesBackALockInOneStatementEach() {
        assertTwoStatementsPerCycle(Mode.NAMED);
    }

    @Test
    void leaseTakesAndGivesBackALockInOneStatementEach() {
        assertTwoStatementsPerCycle(Mode.LEASE);
    }

    private static void assertTwoStatementsPerCycle(Mode engine) {
        String id = "statements-" + engine.name().toLowerCase(Locale.ROOT);
        try (StandaloneLocks instance = StandaloneLocks.Settings.of(id).mode(engine).table(id.replace('-', '_') + "_lock")
                .start()) {
            assertThat(statements(instance.locks, id + ":")).as("%s statements for %d acquires and releases", engine,
                    CYCLES).isBetween(2L * CYCLES, 2L * CYCLES + BACKGROUND);
        }
    }

    /**
     * The statements the server received for {@link #CYCLES} uncontended acquires and releases: the names taken once
     * first (a lease's row is created by its first take), then the cycles over them, counted.
     */
    private static long statements(LockManager locks, String prefix) {
        for (int i = 0; i < 10; i++) {
            locks.acquire(prefix + i, Duration.ZERO).release();
        }
        long before = questions();
        for (int i = 0; i < CYCLES; i++) {
            locks.acquire(prefix + (i % 10), Duration.ZERO).release();
        }
        return questions() - before - 1; // the count's own statement
    }

    private static long questions() {
        return ServerState.queryLong("SHOW GLOBAL STATUS LIKE 'Questions'");
    }
}
