package io.quarkiverse.mysqllock.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.quarkiverse.mysqllock.it.FaultSuite.Fault;
import io.quarkiverse.mysqllock.it.FaultSuite.Kind;
import io.quarkiverse.mysqllock.it.JobChecker.Row;
import io.quarkiverse.mysqllock.it.JobControls.Request;

/**
 * The scheduling scenario's rules ({@link JobChecker}) on small histories: each rule finds what it is there for, and a
 * clean history passes. Ticks are a second apart from {@link #T0}; the run lasts from 0 to 20 s (ticks 6 to 15
 * checked).
 */
class JobCheckerTest {

    private static final long T0 = 1_800_000_000_000L;
    private static final long FROM = T0 * 1000;
    private static final long TO = FROM + 20_000_000;

    @TempDir
    Path journals;

    private final StringBuilder journal = new StringBuilder();
    private final List<Row> rows = new ArrayList<>();
    private final List<Fault> faults = new ArrayList<>();
    private final List<Request> requests = new ArrayList<>();
    private int sections;

    /** A run of the tick {@code second} s after T0, by w1.1, of a kind, started 10 ms after its tick. */
    private void ran(long second, String kind) {
        ran(second * 1000, kind, (T0 + second * 1000) * 1000 + 10_000);
    }

    private void ran(long tickMillisAfterT0, String kind, long startedAt) {
        String id = "w1.1-tjob-" + ++sections;
        journal.append("T\t").append(id).append('\t').append(T0 + tickMillisAfterT0).append('\t').append(kind)
                .append('\n').append("S\t").append(id).append("\tjob:tick\t").append(sections).append('\t')
                .append(startedAt).append('\t').append(startedAt - 1000).append('\n').append("E\t").append(id)
                .append("\taccepted\t").append(startedAt + 5000).append('\t').append(startedAt + 5000).append('\t')
                .append(startedAt + 4000).append('\n').append("R\t").append(id).append('\t').append(startedAt + 6000)
                .append('\n');
        rows.add(new Row(T0 + tickMillisAfterT0, kind.toUpperCase(java.util.Locale.ROOT), "SUCCEEDED", "vm/1/w1.1"));
    }

    private void everyTickRan() {
        for (long second = 0; second <= 20; second++) {
            ran(second, "scheduled");
        }
    }

    private JobChecker check() throws IOException {
        Files.writeString(journals.resolve("w1.1.tsv"), journal);
        FaultHistory history = new FaultHistory(journals).refresh();
        return new JobChecker(history.all(), rows, faults, Map.of(), requests, FROM, TO).check();
    }

    @Test
    void aCleanHistoryPasses() throws IOException {
        everyTickRan();
        JobChecker checker = check();
        assertThat(checker.violations).isEmpty();
        assertThat(checker.figures.get("ticks checked")).isEqualTo(10L);
    }

    @Test
    void aTickRunTwiceIsAViolation() throws IOException {
        everyTickRan();
        ran(7, "catch_up");
        assertThat(check().violations).singleElement().asString().startsWith("Tick " + (T0 + 7000) + " ran 2 times");
    }

    @Test
    void aTickNeitherRunNorRecordedIsLostUnlessAFaultHitItsClaim() throws IOException {
        for (long second = 0; second <= 20; second++) {
            if (second != 9) {
                ran(second, "scheduled");
            }
        }
        assertThat(check().violations).singleElement().asString().startsWith("Tick " + (T0 + 9000) + " was lost");

        long killed = (T0 + 9500) * 1000;
        faults.add(new Fault(Kind.SIGKILL, "w2.1", null, killed, killed, "its claimer"));
        JobChecker excused = check();
        assertThat(excused.violations).isEmpty();
        assertThat(excused.figures.get("ticks neither run nor recorded, by the fault at their claim"))
                .isEqualTo(Map.of(Kind.SIGKILL.label, 1L));
    }

    @Test
    void theTicksOfAFleetDownAreNotExcusedPastItsKills() throws IOException {
        for (long second = 0; second <= 20; second++) {
            if (second < 8 || second > 11) {
                ran(second, "scheduled");
            }
        }
        long down = (T0 + 7500) * 1000;
        faults.add(new Fault(Kind.FLEET_DOWN, null, null, down, (T0 + 12_000) * 1000, "all"));
        assertThat(check().violations).as("8 and 9 claimed as the fleet died; 10 and 11 missed, never caught up")
                .hasSize(2).allMatch(v -> v.contains("was lost"));
    }

    @Test
    void aRunAfterAPauseWasAnsweredIsAViolation() throws IOException {
        everyTickRan();
        long paused = (T0 + 8200) * 1000;
        requests.add(new Request("pause", "w2.1", paused - 50_000, paused, 200));
        requests.add(new Request("resume", "w3.1", (T0 + 11_500) * 1000, (T0 + 11_550) * 1000, 200));
        List<String> violations = check().violations;
        assertThat(violations).as("ticks 9, 10 and 11 ran while paused").hasSize(3)
                .allMatch(v -> v.contains("after the pause answered"));
    }

    @Test
    void aRunNowAcceptedRunsOnceOnTheInstanceAsked() throws IOException {
        everyTickRan();
        long asked = (T0 + 12_300) * 1000;
        requests.add(new Request("run-now", "w1.1", asked, asked + 20_000, 202));
        assertThat(check().violations).singleElement().asString().startsWith("A run-now accepted never ran");

        ran(12_305, "run_now", asked + 25_000);
        assertThat(check().violations).isEmpty();

        ran(12_310, "run_now", asked + 30_000);
        assertThat(check().violations).singleElement().asString().startsWith("A run-now ran twice");
    }

    /** Found by a 10-minute run: two run-nows a second apart, each run once, were taken for one run twice. */
    @Test
    void runNowsASecondApartAreEachTheirOwn() throws IOException {
        everyTickRan();
        long first = (T0 + 12_068) * 1000;
        requests.add(new Request("run-now", "w1.1", first, first + 225_000, 202));
        ran(12_256, "run_now", first + 190_000);
        long second = (T0 + 13_088) * 1000;
        requests.add(new Request("run-now", "w1.1", second, second + 18_000, 202));
        ran(13_102, "run_now", second + 15_000);
        assertThat(check().violations).isEmpty();
    }
}
