package io.quarkiverse.mysqllock.runtime.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.AbstractQueuedSynchronizer;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;

/**
 * The in-JVM gate per lock name: one thread through at a time, the others in the order they came; let go from any
 * thread; one gate per name while it has users, none once the last one left.
 */
class LocalGateTest {

    private static final long PATIENCE_NANOS = TimeUnit.SECONDS.toNanos(30);

    @Test
    void oneGatePerNameWhileItHasUsersAndNoneOnceTheLastLeft() {
        LocalGate.Gates gates = new LocalGate.Gates();
        LocalGate a = gates.enter("a");
        assertThat(gates.enter("a")).as("a second user of a").isSameAs(a);
        LocalGate b = gates.enter("b");
        assertThat(b).isNotSameAs(a);
        assertThat(gates.size()).isEqualTo(2);

        gates.leave("a", a);
        assertThat(gates.size()).as("a still has a user").isEqualTo(2);
        assertThat(gates.enter("a")).isSameAs(a);
        gates.leave("a", a);
        gates.leave("a", a);
        gates.leave("b", b);
        assertThat(gates.size()).isZero();
        assertThat(gates.enter("a")).as("a new gate once the last user left").isNotSameAs(a);
    }

    @Test
    void aGateThatIsNoLongerTheNamesLeavesTheCurrentOneAlone() {
        LocalGate.Gates gates = new LocalGate.Gates();
        LocalGate old = gates.enter("a");
        gates.leave("a", old);
        LocalGate current = gates.enter("a");

        gates.leave("a", old);
        gates.leave("never-entered", old);
        assertThat(gates.size()).isEqualTo(1);
        assertThat(gates.enter("a")).isSameAs(current);
    }

    @Test
    void oneThreadPassesAtATimeAndAnyThreadMayLetTheGateGo() throws Exception {
        LocalGate gate = new LocalGate();
        assertThat(gate.pass(0)).isTrue();
        assertThat(gate.pass(0)).as("taken").isFalse();
        assertThat(gate.pass(-1)).as("a negative time-out is one attempt").isFalse();
        assertThat(gate.pass(TimeUnit.MILLISECONDS.toNanos(20))).as("still taken at the time-out").isFalse();

        Thread opener = new Thread(gate::open, "gate-opener");
        opener.start();
        opener.join(TimeUnit.NANOSECONDS.toMillis(PATIENCE_NANOS));
        assertThat(gate.pass(0)).as("let go by another thread").isTrue();
    }

    @Test
    void anInterruptedWaitThrows() throws Exception {
        LocalGate gate = new LocalGate();
        assertThat(gate.pass(0)).isTrue();
        Thread.currentThread().interrupt();
        try {
            gate.pass(PATIENCE_NANOS);
            throw new AssertionError("passed a taken gate");
        } catch (InterruptedException expected) {
            assertThat(Thread.currentThread().isInterrupted()).isFalse();
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void waitersPassInTheOrderTheyCame() throws Exception {
        LocalGate gate = new LocalGate();
        assertThat(gate.pass(0)).isTrue();
        List<Integer> order = new CopyOnWriteArrayList<>();
        List<Thread> waiters = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            int number = i;
            Thread waiter = new Thread(() -> {
                try {
                    if (gate.pass(PATIENCE_NANOS)) {
                        order.add(number);
                        gate.open();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "gate-waiter-" + i);
            waiter.setDaemon(true);
            waiter.start();
            awaitWaitingAtTheGate(waiter); // in the queue before the next one comes
            waiters.add(waiter);
        }

        gate.open();
        for (Thread waiter : waiters) {
            waiter.join(TimeUnit.NANOSECONDS.toMillis(PATIENCE_NANOS));
        }
        assertThat(order).containsExactly(1, 2, 3);
        assertThat(gate.pass(0)).as("the last one let it go").isTrue();
    }

    /** The way the engines use it: enter, pass, open, leave; many threads on few names. */
    @Test
    void manyThreadsOnFewNamesPassOneAtATimeAndLeaveNoGateBehind() throws Exception {
        LocalGate.Gates gates = new LocalGate.Gates();
        String[] names = { "a", "b" };
        AtomicIntegerArray inside = new AtomicIntegerArray(names.length);
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger passes = new AtomicInteger();
        int threads = 4;
        int rounds = 2_000;
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Void>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int seed = t;
                done.add(pool.submit(() -> {
                    start.await(30, TimeUnit.SECONDS);
                    for (int round = 0; round < rounds; round++) {
                        int n = (seed + round) % names.length;
                        LocalGate gate = gates.enter(names[n]);
                        try {
                            if (!gate.pass(PATIENCE_NANOS)) {
                                throw new AssertionError("gate " + names[n] + " never came free");
                            }
                            try {
                                if (inside.incrementAndGet(n) != 1) {
                                    overlaps.incrementAndGet();
                                }
                                Thread.yield();
                                passes.incrementAndGet();
                                inside.decrementAndGet(n);
                            } finally {
                                gate.open();
                            }
                        } finally {
                            gates.leave(names[n], gate);
                        }
                    }
                    return null;
                }));
            }
            for (Future<Void> future : done) {
                future.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(overlaps.get()).as("two threads inside one name's gate").isZero();
        assertThat(passes.get()).isEqualTo(threads * rounds);
        assertThat(gates.size()).as("gates left behind").isZero();
    }

    /** Waits until the thread is queued in the gate's fair semaphore (it parks only once queued). */
    private static void awaitWaitingAtTheGate(Thread thread) throws InterruptedException {
        long deadline = System.nanoTime() + PATIENCE_NANOS;
        while (!(LockSupport.getBlocker(thread) instanceof AbstractQueuedSynchronizer)) {
            if (System.nanoTime() - deadline > 0 || !thread.isAlive()) {
                throw new AssertionError(thread.getName() + " never waited at the gate (" + thread.getState() + ")");
            }
            Thread.sleep(1);
        }
    }
}
