package io.quarkiverse.mysqllock.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.it.FaultHistory.Write;

/** The checker's judgement of histories taken from real fault runs. */
class FaultCheckerTest {

    /**
     * From a clean-clone build's {@code FaultSuiteIT} (NAMED, a database restart): the server ended w1.1's session as it
     * shut down and granted the name to w2.2's waiting {@code GET_LOCK} before ending w2.2's session too. w2.2 got no
     * fencing token (its connection failed: "no fencing token could be issued") and wrote nothing; w1.1, told within
     * its keepalive, wrote under its fence meanwhile. No later holder wrote anything: not an unsafe overlap.
     */
    @Test
    void aLaterHolderWithoutAFencingTokenWroteNothing(@TempDir Path journals) throws IOException {
        Files.writeString(journals.resolve("w1.1.tsv"), """
                S\tw1.1-t7-310\thot-1\t1212\t1795702824021676\t1795702823749876
                E\tw1.1-t7-310\taccepted\t1795702825053300\t1795702825053302\t1795702824043294
                R\tw1.1-t7-310\t1795702825053391
                L\tw1.1-t7-310\t1795702825053398\tCONNECTION_LOST
                """);
        Files.writeString(journals.resolve("w2.2.tsv"), """
                S\tw2.2-t6-257\thot-1\t0\t1795702824034871\t1795702823872119
                E\tw2.2-t6-257\tno-fence\t1795702824048350\t1795702824048350
                R\tw2.2-t6-257\t1795702824057692
                L\tw2.2-t6-257\t1795702824057701\tCONNECTION_LOST
                """);
        FaultHistory history = new FaultHistory(journals).refresh();
        history.load(List.of(new Write(4444, "hot-1", 1212, "w1.1-t7-310", 1795702825052430L)), Map.of("hot-1", 1L));

        FaultChecker checker = new FaultChecker(LockMode.NAMED, false, history, List.of(), List.of("hot-1"), 2_800_000,
                2_000_000).check();

        assertThat(checker.violations).isEmpty();
        assertThat(checker.figures.get("unsafe overlaps")).isEqualTo(0L);
    }

    /** The same history with a later holder that had a token and wrote first: the earlier write came after it. */
    /**
     * Seen in CI (semaphore, LEASE): w2.1 asked for the permit 4.3 s before w1.1 was granted it, was paused (SIGSTOP)
     * inside acquire() past its lease's end, and returned a hold that was lost at delivery (told 78 us later, no fencing
     * token, nothing written). w1.1 took the permit over by observed expiry in between: it was never overlapped.
     */
    @Test
    void aHoldDeliveredAfterItsLeaseEndedOverlapsNobody(@TempDir Path journals) throws IOException {
        Files.writeString(journals.resolve("w1.1.tsv"), """
                S\tw1.1-t6-23\thot#permit-2\t132\t1795753935929933\t1795753935916268
                E\tw1.1-t6-23\taccepted\t1795753935938099\t1795753935938122\t1795753935929948
                R\tw1.1-t6-23\t1795753935938988
                """);
        Files.writeString(journals.resolve("w2.1.tsv"), """
                L\tw2.1-t3-1\t1795753935934240\tLEASE_EXPIRED
                S\tw2.1-t3-1\thot#permit-2\t0\t1795753935934162\t1795753931664781
                E\tw2.1-t3-1\tlost-before-write\t1795753935947476\t1795753935947479
                R\tw2.1-t3-1\t1795753935959313
                """);
        FaultHistory history = new FaultHistory(journals).refresh();
        history.load(List.of(new Write(540, "hot#permit-2", 132, "w1.1-t6-23", 1795753935930658L)),
                Map.of("hot#permit-2", 1L));

        FaultChecker checker = new FaultChecker(LockMode.LEASE, false, history, List.of(), List.of("hot#permit-2"),
                5_000_000, 2_000_000).check();

        assertThat(checker.violations).isEmpty();
        assertThat(checker.figures.get("unsafe overlaps")).isEqualTo(0L);
    }

    /**
     * From a 10-minute NAMED fault run beside a busy build (a network cut of w1.7): w1.7 asked 9 ms before w3.4, the
     * server granted it the name first, and the cut ended its session as the grant came back; the server then granted
     * the name to w3.4, whose acquire() returned 0.2 ms before w1.7's. w1.7 got no fencing token (its connections
     * failed), wrote nothing, and was told at its release; w3.4 wrote under its fence. Local times put w3.4 first, but
     * it was never overlapped: the NAMED form of a hold delivered lost.
     */
    @Test
    void aHoldWhoseSessionDiedBeforeItsDeliveryOverlapsNobody(@TempDir Path journals) throws IOException {
        FaultChecker checker = networkCutOfW17(journals, 1796198867079883L);

        assertThat(checker.violations).isEmpty();
        assertThat(checker.figures.get("unsafe overlaps")).isEqualTo(0L);
    }

    /**
     * The same without the head start: w1.7 asked after w3.4 was granted the name, so nothing says the server granted
     * w1.7 first, and a token-less holder running beside a holder never told stays an unsafe overlap.
     */
    @Test
    void aTokenLessHolderThatAskedAfterTheGrantIsStillUnsafe(@TempDir Path journals) throws IOException {
        FaultChecker checker = networkCutOfW17(journals, 1796198867445600L);

        assertThat(checker.violations).anyMatch(v -> v.startsWith("Unsafe overlap on 'hot-3'"));
    }

    /** The run's journal lines of the network cut of w1.7, with w1.7's request at {@code w17RequestedAt}; checked. */
    private static FaultChecker networkCutOfW17(Path journals, long w17RequestedAt) throws IOException {
        Files.writeString(journals.resolve("w1.7.tsv"), """
                S\tw1.7-t2-18\thot-3\t0\t1796198867445743\t%d
                E\tw1.7-t2-18\tno-fence\t1796198867451453\t1796198867451453
                R\tw1.7-t2-18\t1796198867490547
                L\tw1.7-t2-18\t1796198867490975\tCONNECTION_LOST
                """.formatted(w17RequestedAt));
        Files.writeString(journals.resolve("w3.4.tsv"), """
                S\tw3.4-t8-502b\thot-3\t6819\t1796198867445539\t1796198867089120
                E\tw3.4-t8-502b\taccepted\t1796198867469498\t1796198867469499\t1796198867467390
                R\tw3.4-t8-502b\t1796198867471040
                """);
        FaultHistory history = new FaultHistory(journals).refresh();
        history.load(List.of(new Write(21019, "hot-3", 6819, "w3.4-t8-502b", 1796198867468866L)), Map.of("hot-3", 1L));
        return new FaultChecker(LockMode.NAMED, false, history, List.of(), List.of("hot-3"), 5_000_000, 1_500_000)
                .check();
    }

    @Test
    void anEarlierHolderWritingAfterTheLaterHolderIsUnsafe(@TempDir Path journals) throws IOException {
        Files.writeString(journals.resolve("w1.1.tsv"), """
                S\tw1.1-t7-310\thot-1\t1212\t1795702824021676\t1795702823749876
                E\tw1.1-t7-310\taccepted\t1795702825053300\t1795702825053302\t1795702824043294
                L\tw1.1-t7-310\t1795702825053398\tCONNECTION_LOST
                """);
        Files.writeString(journals.resolve("w2.2.tsv"), """
                S\tw2.2-t6-257\thot-1\t1213\t1795702824034871\t1795702823872119
                E\tw2.2-t6-257\taccepted\t1795702824048350\t1795702824048350
                """);
        FaultHistory history = new FaultHistory(journals).refresh();
        history.load(List.of(new Write(4443, "hot-1", 1213, "w2.2-t6-257", 1795702824040000L),
                new Write(4444, "hot-1", 1212, "w1.1-t7-310", 1795702825052430L)), Map.of("hot-1", 2L));

        FaultChecker checker = new FaultChecker(LockMode.NAMED, false, history, List.of(), List.of("hot-1"), 2_800_000,
                2_000_000).check();

        assertThat(checker.violations).anyMatch(v -> v.startsWith("Unsafe overlap on 'hot-1'"));
    }
}
