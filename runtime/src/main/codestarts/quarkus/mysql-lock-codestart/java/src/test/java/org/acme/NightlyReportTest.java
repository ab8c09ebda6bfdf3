package org.acme;

import static org.junit.jupiter.api.Assertions.assertEquals;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.testing.LockAssert;
import io.quarkiverse.mysqllock.testing.LockFaults;
import io.quarkus.test.junit.QuarkusTest;

/**
 * Runs against the database Quarkus gives the tests: a Dev Services container where Docker or Podman runs, the test
 * kit's embedded MariaDB where none does.
 */
@QuarkusTest
class NightlyReportTest {

    @Inject
    NightlyReport report;

    @Inject
    LockFaults faults;

    @Test
    void theExportRunsUnderItsLock() throws Exception {
        String result = LockAssert.assertRunsUnderLock("report:export", () -> report.export(3, chunk -> {
        }));
        assertEquals("exported", result);
    }

    @Test
    void aLostLockStopsTheExportAndItsFallbackRuns() {
        int retries = report.retriesScheduled();
        String result = report.export(3, chunk -> {
            if (chunk == 1) {
                faults.loseLock("report:export");
            }
        });
        assertEquals("retry scheduled", result);
        assertEquals(retries + 1, report.retriesScheduled());
    }

    @Test
    void anotherReplicaHoldingTheLockMeansNoExportHere() {
        try (LockFaults.Busy otherReplica = faults.makeBusy("report:export")) {
            assertEquals("exported elsewhere", report.export(3, chunk -> {
            }));
        }
    }

    @Test
    void anOrderIsShippedUnderItsOwnLock() throws Exception {
        int shipped = report.ordersShipped();
        LockAssert.assertRunsUnderLock("order:1001", () -> report.ship("1001"));
        assertEquals(shipped + 1, report.ordersShipped());
    }

    @AfterEach
    void nothingLeftHeld() {
        LockAssert.assertNoLockHeld();
    }
}
