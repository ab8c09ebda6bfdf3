package io.quarkiverse.mysqllock.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.it.TransactionChecker.Commit;

/** The transaction checker's judgement of commit records. */
class TransactionCheckerTest {

    @Test
    void commitsInTheLocksOrderEachReadingTheOneBeforeAreClean() {
        TransactionChecker checker = new TransactionChecker(List.of(new Commit("hot-1", "a", 3, 0, 1),
                new Commit("hot-1", "b", 4, 1, 2), new Commit("hot-1", "c", 7, 2, 3)), Map.of("hot-1", 3L)).check();
        assertThat(checker.violations).isEmpty();
        assertThat(checker.figures).containsEntry(TransactionChecker.STALE, 0L).containsEntry(TransactionChecker.LOST, 0L);
    }

    /**
     * A holder paused after its release, before its commit: the next holder (token 5) read sequence 1 and waited for the
     * paused one's row lock; the paused one (token 4) committed sequence 2 after that grant, the next one 3, over it.
     */
    @Test
    void aCommitALaterHolderDidNotSeeIsStaleAndTheLaterOneLostAnUpdate() {
        TransactionChecker checker = new TransactionChecker(List.of(new Commit("hot-1", "a", 3, 0, 1),
                new Commit("hot-1", "paused", 4, 1, 2), new Commit("hot-1", "next", 5, 1, 3)), Map.of("hot-1", 3L))
                .check();
        assertThat(checker.figures).containsEntry(TransactionChecker.STALE, 1L).containsEntry(TransactionChecker.LOST, 1L);
        assertThat(checker.violations).hasSize(2).anySatisfy(v -> assertThat(v).contains("paused (token 4, seq 2)"));
    }

    /** A later holder that committed before the earlier one (the earlier one's commit came after a greater token's). */
    @Test
    void aCommitAfterAGreaterTokensCommitIsStale() {
        TransactionChecker checker = new TransactionChecker(List.of(new Commit("hot-2", "later", 9, 0, 1),
                new Commit("hot-2", "earlier", 8, 0, 2)), Map.of("hot-2", 2L)).check();
        assertThat(checker.figures).containsEntry(TransactionChecker.STALE, 1L);
    }

    @Test
    void aTokenThatCommitsTwiceAndACounterThatDisagreesAreViolations() {
        TransactionChecker checker = new TransactionChecker(List.of(new Commit("hot-3", "a", 3, 0, 1),
                new Commit("hot-3", "b", 3, 1, 2)), Map.of("hot-3", 3L)).check();
        assertThat(checker.violations).hasSize(2);
    }
}
