package io.quarkiverse.mysqllock.runtime.lease;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * Flat combining: the threads that ask at the same moment are served by one of them, in one batch. A thread queues its
 * request and, if no batch is under way, runs one at once with every request queued so far (its own among them): a
 * thread alone never waits for others to join. While a batch runs, the requests that come meanwhile queue, and the
 * first of them runs the next batch as soon as the leader lets go. Each request is answered exactly once, by the batch
 * that took it; a request no batch took by its deadline (a batch stalled on its connection holds every later one up)
 * withdraws, and is answered as unanswered at once, so that its caller goes on alone.
 *
 * @param <T> a request
 * @param <R> its answer
 */
final class Combiner<T, R> {

    /**
     * How long a waiting thread sleeps before it looks again, should a wake-up be missed (none is known to be: the batch
     * that answers a request wakes its thread, and a leader letting go wakes the first queued thread). Each look costs a
     * context switch: at 1 ms, 16 waiting threads made the acquisitions the slowest part of a lease.
     */
    private static final long PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    /**
     * A queued request; its answer is written once, by the batch that took it, then it is done. A batch takes it, or its
     * thread withdraws it once its deadline passed, whichever comes first.
     */
    static final class Request<T, R> {
        final T value;
        private final Thread thread = Thread.currentThread();
        private final long deadline;
        /** Set once, by the batch that takes the request or by its thread withdrawing it. */
        private final AtomicBoolean claimed = new AtomicBoolean();
        private volatile R answer;
        private volatile boolean done;

        private Request(T value, long deadline) {
            this.value = value;
            this.deadline = deadline;
        }

        /** Whether the request was answered. */
        boolean done() {
            return done;
        }

        void answer(R result) {
            answer = result;
            done = true;
            LockSupport.unpark(thread);
        }
    }

    private final ConcurrentLinkedQueue<Request<T, R>> queue = new ConcurrentLinkedQueue<>();
    private final ReentrantLock leader = new ReentrantLock();
    private final int maxBatch;
    /** Runs a batch and answers every request of it; a request it leaves unanswered gets {@link #unanswered}. */
    private final BatchRunner<T, R> runner;
    /** The answer of a request its batch left unanswered (the batch failed). */
    private final Function<T, R> unanswered;

    @FunctionalInterface
    interface BatchRunner<T, R> {
        void run(List<Request<T, R>> batch);
    }

    Combiner(int maxBatch, BatchRunner<T, R> runner, Function<T, R> unanswered) {
        this.maxBatch = maxBatch;
        this.runner = runner;
        this.unanswered = unanswered;
    }

    /**
     * The answer to {@code value}, from a batch this thread or another ran; the unanswered answer if no batch took it by
     * {@code deadline} ({@link System#nanoTime()}).
     */
    R submit(T value, long deadline) {
        Request<T, R> request = new Request<>(value, deadline);
        queue.add(request);
        boolean interrupted = await(request);
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return request.answer;
    }

    /** Waits until the request is answered, leading batches meanwhile: whether the thread was interrupted. */
    private boolean await(Request<T, R> request) {
        boolean interrupted = false;
        while (!request.done) {
            if (leader.tryLock()) {
                // A batch serves other threads too: an interrupt of this one is not theirs (it would fail the batch's
                // borrow, or close its connection); it is handed back to this caller at the end.
                interrupted |= Thread.interrupted();
                try {
                    if (!request.done) {
                        runBatch();
                    }
                } catch (RuntimeException | Error e) {
                    // The batch this thread led failed with its request still queued: removed while this thread still
                    // leads, so that no later batch runs it for nobody.
                    queue.remove(request);
                    throw e;
                } finally {
                    leader.unlock();
                    // The next batch is the first queued thread's to run (one that withdrew is not waiting any more).
                    for (Request<T, R> next : queue) {
                        if (!next.claimed.get()) {
                            LockSupport.unpark(next.thread);
                            break;
                        }
                    }
                }
            } else {
                long left = request.deadline - System.nanoTime();
                if (left <= 0 && request.claimed.compareAndSet(false, true)) {
                    // No batch took it in time (one is stalled): withdrawn, its caller goes on alone.
                    queue.remove(request);
                    request.answer(unanswered.apply(request.value));
                    break;
                }
                LockSupport.parkNanos(this, left > 0 ? Math.min(left, PARK_NANOS) : PARK_NANOS);
                // An interrupt must not turn the wait into a spin; it is handed back to the caller at the end.
                interrupted |= Thread.interrupted();
            }
        }
        return interrupted;
    }

    private void runBatch() {
        List<Request<T, R>> batch = new ArrayList<>();
        for (Request<T, R> next; batch.size() < maxBatch && (next = queue.poll()) != null;) {
            if (next.claimed.compareAndSet(false, true)) {
                batch.add(next); // else withdrawn by its thread
            }
        }
        if (batch.isEmpty()) {
            return;
        }
        try {
            runner.run(batch);
        } finally {
            for (Request<T, R> request : batch) {
                if (!request.done) {
                    request.answer(unanswered.apply(request.value));
                }
            }
        }
    }
}
