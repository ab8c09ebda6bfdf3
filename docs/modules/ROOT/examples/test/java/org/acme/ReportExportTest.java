package org.acme;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.testing.EmbeddedMariaDb;
import io.quarkiverse.mysqllock.testing.LockAssert;
import io.quarkiverse.mysqllock.testing.LockFaults;
import io.quarkus.test.junit.QuarkusTest;

// tag::test[]
@QuarkusTest
@EmbeddedMariaDb // <1>
class ReportExportTest {

    @Inject
    ReportExport export;

    @Inject
    LockFaults faults; // <2>

    @Test
    void theExportRunsUnderItsLock() throws Exception {
        String result = LockAssert.assertRunsUnderLock("report:export", // <3>
                () -> export.export(3, chunk -> {
                }));
        assertThat(result).isEqualTo("exported");
    }

    @Test
    void aLostLockStopsTheExportAndSchedulesARetry() {
        int retries = export.retriesScheduled();
        String result = export.export(3, chunk -> {
            if (chunk == 1) {
                faults.loseLock("report:export"); // <4>
            }
        });
        assertThat(result).isEqualTo("retry scheduled");
        assertThat(export.retriesScheduled()).isEqualTo(retries + 1);
    }

    @Test
    void anotherReplicaHoldingTheLockMeansNoExportHere() {
        try (LockFaults.Busy otherReplica = faults.makeBusy("report:export")) { // <5>
            assertThat(export.export(3, chunk -> {
            })).isEqualTo("exported elsewhere");
        }
    }

    @AfterEach
    void nothingLeftHeld() {
        LockAssert.assertNoLockHeld(); // <6>
    }
}
// end::test[]
