package io.quarkiverse.mysqllock.runtime.lease;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Flat combining, without a database: a thread alone runs its own batch at once; the requests that come while a batch
 * runs are served together by the next one, at most {@code maxBatch} at a time, in the order they came; each request is
 * answered once, by its batch or as unanswered; a request no batch took by its deadline withdraws and is never run; an
 * interrupt is handed back to its own caller, never seen by a batch that serves others.
 * <p>
 * The first batch of most tests holds the combiner ({@link #BLOCKER}) until the test has queued the others: a thread is
 * known to be queued once it parks in the combiner, which it does only after queuing its request.
 */
class CombinerTest {

    private static final long PATIENCE_SECONDS = 30;
    private static final long FAR = TimeUnit.SECONDS.toNanos(300);
    /** The value whose batch waits for {@link #firstBatchMayEnd}. */
    private static final int BLOCKER = 0;

    /** The values of each batch the runner was given, in order. */
    private final List<List<Integer>> batches = new CopyOnWriteArrayList<>();
    /** Whether the runner's thread was interrupted while it ran the batch of each value. */
    private final Map<Integer, Boolean> interruptedInBatch = new ConcurrentHashMap<>();
    private final CountDownLatch firstBatchEntered = new CountDownLatch(1);
    private final CountDownLatch firstBatchMayEnd = new CountDownLatch(1);

    @AfterEach
    void letEverythingEnd() {
        firstBatchMayEnd.countDown();
        Thread.interrupted();
    }

    /** Records each batch, holds the blocker's, and answers the requests {@code answered} accepts: "r" + value. */
    private Combiner.BatchRunner<Integer, String> runner(Predicate<Integer> answered) {
        return batch -> {
            List<Integer> values = batch.stream().map(request -> request.value).toList();
            batches.add(values);
            for (Integer value : values) {
                interruptedInBatch.put(value, Thread.currentThread().isInterrupted());
            }
            if (values.contains(BLOCKER)) {
                firstBatchEntered.countDown();
                awaitLatch(firstBatchMayEnd);
            }
            for (Combiner.Request<Integer, String> request : batch) {
                if (answered.test(request.value)) {
                    request.answer("r" + request.value);
                }
            }
        };
    }

    private Combiner<Integer, String> combiner(int maxBatch) {
        return new Combiner<>(maxBatch, runner(value -> true), value -> "unanswered " + value);
    }

    /** Starts the blocker's batch on a thread of its own and waits until it runs; it ends at firstBatchMayEnd. */
    private Caller blockWith(Combiner<Integer, String> combiner) throws InterruptedException {
        Caller leader = new Caller("leader", () -> combiner.submit(BLOCKER, System.nanoTime() + FAR));
        assertThat(firstBatchEntered.await(PATIENCE_SECONDS, TimeUnit.SECONDS)).as("the first batch runs").isTrue();
        return leader;
    }

    @Test
    void aThreadAloneRunsItsOwnBatchAtOnce() {
        Combiner<Integer, String> combiner = combiner(16);
        assertThat(combiner.submit(7, System.nanoTime() + FAR)).isEqualTo("r7");
        assertThat(batches).containsExactly(List.of(7));
    }

    @Test
    void aThreadAloneIsServedEvenPastItsDeadline() {
        Combiner<Integer, String> combiner = combiner(16);
        assertThat(combiner.submit(7, System.nanoTime() - TimeUnit.SECONDS.toNanos(1))).as("no batch stalls it")
                .isEqualTo("r7");
        assertThat(batches).containsExactly(List.of(7));
    }

    @Test
    void requestsThatComeDuringABatchAreServedTogetherByTheNext() throws Exception {
        Combiner<Integer, String> combiner = combiner(16);
        Caller leader = blockWith(combiner);
        List<Caller> callers = new ArrayList<>();
        for (int value = 1; value <= 4; value++) {
            int mine = value;
            Caller caller = new Caller("caller-" + value, () -> combiner.submit(mine, System.nanoTime() + FAR));
            caller.awaitQueuedIn(combiner);
            callers.add(caller);
        }
        firstBatchMayEnd.countDown();

        assertThat(leader.outcome()).isEqualTo("r0");
        for (int i = 0; i < callers.size(); i++) {
            assertThat(callers.get(i).outcome()).as("each gets its own answer").isEqualTo("r" + (i + 1));
        }
        assertThat(batches).hasSize(2);
        assertThat(batches.get(0)).containsExactly(BLOCKER);
        assertThat(batches.get(1)).as("one batch for all that came meanwhile").containsExactly(1, 2, 3, 4);
    }

    @Test
    void aBatchTakesAtMostMaxBatchRequestsInTheOrderTheyCame() throws Exception {
        Combiner<Integer, String> combiner = combiner(2);
        Caller leader = blockWith(combiner);
        List<Caller> callers = new ArrayList<>();
        for (int value = 1; value <= 3; value++) {
            int mine = value;
            Caller caller = new Caller("caller-" + value, () -> combiner.submit(mine, System.nanoTime() + FAR));
            caller.awaitQueuedIn(combiner); // queued before the next one comes
            callers.add(caller);
        }
        firstBatchMayEnd.countDown();

        assertThat(leader.outcome()).isEqualTo("r0");
        for (int i = 0; i < callers.size(); i++) {
            assertThat(callers.get(i).outcome()).isEqualTo("r" + (i + 1));
        }
        assertThat(batches).containsExactly(List.of(BLOCKER), List.of(1, 2), List.of(3));
    }

    @Test
    void aRequestItsBatchLeftUnansweredGetsTheUnansweredAnswer() {
        Combiner<Integer, String> combiner = new Combiner<>(16, runner(value -> value % 2 == 0),
                value -> "unanswered " + value);
        assertThat(combiner.submit(2, System.nanoTime() + FAR)).isEqualTo("r2");
        assertThat(combiner.submit(3, System.nanoTime() + FAR)).isEqualTo("unanswered 3");
    }

    @Test
    void aRequestNoBatchTookByItsDeadlineWithdrawsAndIsNeverRun() throws Exception {
        Combiner<Integer, String> combiner = combiner(16);
        Caller leader = blockWith(combiner);
        long soon = TimeUnit.MILLISECONDS.toNanos(100);
        Caller late = new Caller("late", () -> combiner.submit(1, System.nanoTime() + soon));

        assertThat(late.outcome()).as("answered while the batch before it is still stalled").isEqualTo("unanswered 1");
        assertThat(leader.answer).isNotDone();
        firstBatchMayEnd.countDown();
        assertThat(leader.outcome()).isEqualTo("r0");
        assertThat(combiner.submit(2, System.nanoTime() + FAR)).isEqualTo("r2");
        assertThat(batches).as("the withdrawn request is in no batch").containsExactly(List.of(BLOCKER), List.of(2));
    }

    @Test
    void aFailedBatchThrowsToItsLeaderAnswersTheOthersAndLeavesTheCombinerUsable() throws Exception {
        Combiner.BatchRunner<Integer, String> answering = runner(value -> true);
        Combiner<Integer, String> combiner = new Combiner<>(16, batch -> {
            if (batch.stream().anyMatch(request -> request.value == 1)) {
                batches.add(batch.stream().map(request -> request.value).toList());
                throw new IllegalStateException("batch failed");
            }
            answering.run(batch);
        }, value -> "unanswered " + value);
        Caller leader = blockWith(combiner);
        Caller one = new Caller("caller-1", () -> combiner.submit(1, System.nanoTime() + FAR));
        one.awaitQueuedIn(combiner);
        Caller two = new Caller("caller-2", () -> combiner.submit(2, System.nanoTime() + FAR));
        two.awaitQueuedIn(combiner);
        firstBatchMayEnd.countDown();

        assertThat(leader.outcome()).isEqualTo("r0");
        String failure = "threw java.lang.IllegalStateException: batch failed";
        // whichever of the two led the failed batch gets its exception; the other is answered as unanswered
        assertThat(List.of(one.outcome(), two.outcome())).isIn(List.of(failure, "unanswered 2"),
                List.of("unanswered 1", failure));
        assertThat(combiner.submit(5, System.nanoTime() + FAR)).as("the failed leader let the combiner go")
                .isEqualTo("r5");
        assertThat(batches).containsExactly(List.of(BLOCKER), List.of(1, 2), List.of(5));
    }

    @Test
    void anInterruptOfTheLeaderIsNotSeenByItsBatchAndIsHandedBackAfterwards() {
        Combiner<Integer, String> combiner = combiner(16);
        Thread.currentThread().interrupt();
        String answer = combiner.submit(1, System.nanoTime() + FAR);

        assertThat(Thread.interrupted()).as("handed back to the caller").isTrue();
        assertThat(answer).isEqualTo("r1");
        assertThat(interruptedInBatch).containsEntry(1, false);
    }

    @Test
    void anInterruptedWaiterKeepsWaitingGetsItsAnswerAndItsInterruptBack() throws Exception {
        Combiner<Integer, String> combiner = combiner(16);
        Caller leader = blockWith(combiner);
        Caller waiter = new Caller("waiter", () -> combiner.submit(1, System.nanoTime() + FAR)
                + (Thread.currentThread().isInterrupted() ? ", interrupted" : ", not interrupted"));
        waiter.awaitQueuedIn(combiner);
        waiter.thread.interrupt();
        firstBatchMayEnd.countDown();

        assertThat(leader.outcome()).isEqualTo("r0");
        assertThat(waiter.outcome()).isEqualTo("r1, interrupted");
        assertThat(interruptedInBatch).as("its batch ran uninterrupted").containsEntry(1, false);
    }

    private static void awaitLatch(CountDownLatch latch) {
        try {
            if (!latch.await(PATIENCE_SECONDS, TimeUnit.SECONDS)) {
                throw new AssertionError("the test never let the first batch end");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted in the first batch", e);
        }
    }

    /** A thread that submits one request, and what came of it. */
    private static final class Caller {
        final CompletableFuture<String> answer = new CompletableFuture<>();
        final Thread thread;

        Caller(String name, Supplier<String> call) {
            thread = new Thread(() -> {
                try {
                    answer.complete(call.get());
                } catch (Throwable e) {
                    answer.completeExceptionally(e);
                }
            }, "combiner-test-" + name);
            thread.setDaemon(true);
            thread.start();
        }

        /** Its answer, or {@code "threw " + exception}. */
        String outcome() throws Exception {
            try {
                return answer.get(PATIENCE_SECONDS, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                return "threw " + e.getCause();
            }
        }

        /** Waits until the thread parks in the combiner, which it does only with its request queued. */
        void awaitQueuedIn(Combiner<?, ?> combiner) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(PATIENCE_SECONDS);
            while (LockSupport.getBlocker(thread) != combiner) {
                if (System.nanoTime() - deadline > 0 || answer.isDone()) {
                    throw new AssertionError(thread.getName() + " never waited in the combiner (" + thread.getState()
                            + ", done: " + answer.isDone() + ")");
                }
                Thread.sleep(1);
            }
        }
    }
}
