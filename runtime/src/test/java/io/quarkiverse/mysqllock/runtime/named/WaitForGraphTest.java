package io.quarkiverse.mysqllock.runtime.named;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.runtime.engine.GrantingEngine;
import io.quarkiverse.mysqllock.runtime.engine.HoldHandle;

/**
 * Deadlocks among this instance's threads, which the server cannot see: a wait that would close a cycle of "waits for
 * a lock held by" is refused, and not recorded; a lock no longer held ends the chain; a cycle the newcomer is not part
 * of does not trap the check.
 * <p>
 * The threads are never started: the graph knows threads only as the owners of locks and the keys of waits.
 */
class WaitForGraphTest {

    private static final GrantingEngine<NamedLock> ENGINE = new GrantingEngine<>() {
        @Override
        public void release(NamedLock lock) {
        }

        @Override
        public void abandon(NamedLock lock, String message) {
        }

        @Override
        public long fencingToken(NamedLock lock) {
            return 1;
        }
    };

    private final NameRegistry names = new NameRegistry("test-instance", ENGINE);
    private final WaitForGraph graph = new WaitForGraph(names);
    /** The holds that make the threads owners: kept reachable, or their cleaner would release them. */
    private final List<HoldHandle<NamedLock>> keptHolds = new ArrayList<>();
    private final Thread first = new Thread("first");
    private final Thread second = new Thread("second");
    private final Thread third = new Thread("third");

    @AfterEach
    void releaseTheHolds() {
        keptHolds.forEach(HoldHandle::release);
    }

    /** {@code owner} holds the lock known on the server as {@code serverName}; the application calls it "app ...". */
    private NamedLock holds(Thread owner, String serverName) {
        NamedLock lock = new NamedLock("app " + serverName, serverName, null, Instant.now());
        keptHolds.add(new HoldHandle<>(lock, ENGINE, owner));
        names.put(serverName, lock);
        return lock;
    }

    @Test
    void aWaitThatClosesACycleOfTwoThreadsIsRefusedAsADeadlock() {
        holds(first, "a");
        holds(second, "b");
        graph.startWaiting(first, "app b", "b");

        assertThatThrownBy(() -> graph.startWaiting(second, "app a", "a"))
                .isInstanceOfSatisfying(LockNotAcquiredException.class, e -> {
                    assertThat(e.reason()).isEqualTo(LockNotAcquiredException.Reason.DEADLOCK);
                    assertThat(e.lockName()).isEqualTo("app a");
                    assertThat(e.waited()).isEqualTo(Duration.ZERO);
                    assertThat(e.holder()).isEmpty();
                })
                .hasMessageStartingWith("Lock 'app a' was not acquired: this instance detected a deadlock among its"
                        + " threads. This thread holds other locks and the holder of 'app a' waits for one of them.")
                .hasMessageContaining("Acquire locks in one global order, or release and retry")
                .hasNoCause();
    }

    @Test
    void waitsThatCloseNoCycleAreAllowed() {
        holds(second, "b");
        assertThatCode(() -> graph.startWaiting(first, "app free", "free")).as("a lock nobody here holds")
                .doesNotThrowAnyException();
        assertThatCode(() -> graph.startWaiting(third, "app b", "b")).as("its holder waits for nothing")
                .doesNotThrowAnyException();
    }

    @Test
    void aCycleOfThreeIsRefusedAndTheRefusedWaitIsNotRecorded() {
        holds(first, "a");
        holds(second, "b");
        holds(third, "c");
        graph.startWaiting(first, "app b", "b");
        graph.startWaiting(second, "app c", "c");

        assertThatThrownBy(() -> graph.startWaiting(third, "app a", "a")).isInstanceOf(LockNotAcquiredException.class);

        // recorded, third's wait for a would make this one close the cycle c -> third -> a -> first -> b -> second
        graph.stopWaiting(second);
        assertThatCode(() -> graph.startWaiting(second, "app c", "c")).doesNotThrowAnyException();
    }

    @Test
    void aThreadThatStoppedWaitingClosesNoCycle() {
        holds(first, "a");
        holds(second, "b");
        graph.startWaiting(first, "app b", "b");
        graph.stopWaiting(first);

        assertThatCode(() -> graph.startWaiting(second, "app a", "a")).doesNotThrowAnyException();
    }

    @Test
    void aLockNoLongerHeldEndsTheChain() {
        holds(first, "a");
        NamedLock b = holds(second, "b");
        graph.startWaiting(first, "app b", "b");
        b.released = true;
        assertThatCode(() -> graph.startWaiting(second, "app a", "a")).as("released").doesNotThrowAnyException();

        holds(third, "c");
        NamedLock d = holds(first, "d");
        graph.startWaiting(third, "app d", "d");
        d.lost = new LockLostException("app d", LockLostException.Reason.CONNECTION_LOST, "gone", null);
        graph.stopWaiting(first);
        assertThatCode(() -> graph.startWaiting(first, "app c", "c")).as("lost").doesNotThrowAnyException();
    }

    @Test
    void aThreadWaitingForALockItHoldsItselfIsRefused() {
        holds(first, "a");

        assertThatThrownBy(() -> graph.startWaiting(first, "app a", "a")).isInstanceOf(LockNotAcquiredException.class)
                .hasMessageContaining("deadlock among its threads");
    }

    @Test
    void aCycleAmongOtherThreadsDoesNotTrapTheCheck() {
        // the waits are recorded first, the locks granted after: first -> b -> second -> a -> first
        graph.startWaiting(first, "app b", "b");
        graph.startWaiting(second, "app a", "a");
        holds(first, "a");
        holds(second, "b");

        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> graph.startWaiting(third, "app a", "a"),
                "the check of a wait must end even when the chain it follows loops");
    }
}
