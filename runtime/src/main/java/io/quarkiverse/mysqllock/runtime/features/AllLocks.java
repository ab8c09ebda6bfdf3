package io.quarkiverse.mysqllock.runtime.features;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.runtime.coordination.CompositeHandle;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.LockEngine;
import io.quarkiverse.mysqllock.runtime.engine.LockName;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest;
import io.quarkiverse.mysqllock.runtime.transaction.TransactionBoundEngine;

/**
 * Several locks taken as one ({@link io.quarkiverse.mysqllock.LockManager#acquireAll}): all or none, one after the
 * other in the order of their names on the server, so that two callers asking for overlapping sets always ask for their
 * common names in the same order and can never wait for each other in a cycle; released together, in reverse order.
 */
public final class AllLocks extends CompositeHandle {

    private AllLocks(List<ControlledHandle> parts) {
        super(parts);
    }

    /** The distinct locks of these names, in the global order: their names on the server. */
    public static List<LockName> ordered(Collection<LockName> locks) {
        Map<String, LockName> byServerName = new LinkedHashMap<>();
        for (LockName lock : locks) {
            byServerName.putIfAbsent(lock.serverName(), lock);
        }
        return byServerName.values().stream().sorted(Comparator.comparing(LockName::serverName)).toList();
    }

    /**
     * Takes every lock within one wait, or none: a lock still busy at the deadline, or any failure, gives back those
     * taken so far and throws. A lock taken early may be lost while later ones are waited for (its session killed, its
     * lease taken over): then every lock is given back and the whole set taken again, in the same order, with what is
     * left of the wait; a handle is returned only when every part is valid.
     */
    public static AllLocks acquire(LockEngine engine, List<LockName> ordered, long waitNanos) {
        long start = System.nanoTime();
        long deadline = start + waitNanos;
        while (true) {
            List<ControlledHandle> taken = takeInOrder(engine, ordered, deadline);
            ControlledHandle lost;
            try {
                lost = firstLost(taken);
            } catch (RuntimeException | Error e) {
                releaseAll(taken); // nothing left held by nobody
                throw e;
            }
            if (lost == null) {
                return new AllLocks(List.copyOf(taken));
            }
            LockLostException loss = lost.loss();
            releaseAll(taken);
            if (deadline - System.nanoTime() <= 0) {
                throw new LockNotAcquiredException(lost.name(), Duration.ofNanos(System.nanoTime() - start),
                        loss != null && loss.reason() == LockLostException.Reason.READ_ONLY
                                ? LockNotAcquiredException.Reason.READ_ONLY
                                : LockNotAcquiredException.Reason.DATABASE_ERROR,
                        null, "acquireAll of " + names(ordered) + ": none is held, as lock '" + lost.name() + "' was lost"
                                + " while the others were acquired" + (loss == null ? "" : ": " + loss.getMessage()),
                        loss);
            }
        }
    }

    /** Every lock in order within the wait; on any failure those taken are given back and it is thrown. */
    private static List<ControlledHandle> takeInOrder(LockEngine engine, List<LockName> ordered, long deadline) {
        List<ControlledHandle> taken = new ArrayList<>(ordered.size());
        try {
            for (LockName lock : ordered) {
                taken.add(engine.acquire(LockRequest.of(lock, Math.max(0, deadline - System.nanoTime()))));
            }
        } catch (LockNotAcquiredException e) {
            releaseAll(taken);
            throw new LockNotAcquiredException(e.lockName(), e.waited(), e.reason(), e.holder().orElse(null),
                    "acquireAll of " + names(ordered) + ": none is held, as " + e.getMessage(), e);
        } catch (RuntimeException | Error e) {
            releaseAll(taken);
            throw e;
        }
        return taken;
    }

    /**
     * The first part lost while the later ones were waited for, or null: each earlier part is confirmed on the server
     * after the last was taken (NAMED: a session killed meanwhile is not known lost until it is checked).
     */
    private static ControlledHandle firstLost(List<ControlledHandle> taken) {
        long allTaken = System.nanoTime();
        for (int i = 0; i < taken.size() - 1; i++) {
            if (!taken.get(i).confirm(allTaken)) {
                return taken.get(i);
            }
        }
        return null;
    }

    private static String names(List<LockName> locks) {
        return locks.stream().map(LockName::name).toList().toString();
    }

    /** The parts taken so far, given back at once: none is left held, inside a transaction too. */
    private static void releaseAll(List<ControlledHandle> taken) {
        releaseInReverse(taken, hold -> {
            TransactionBoundEngine.releaseAtOnce(hold);
            return null;
        });
    }

    /** The names, in the order they were taken: {@code [a, b, c]}. */
    @Override
    public String name() {
        return holds().stream().map(LockHandle::name).toList().toString();
    }

    /**
     * Several locks have several fencing tokens: each part's {@link LockHandle#fencingToken()}.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    public long fencingToken() {
        throw new UnsupportedOperationException("The handle of acquireAll holds " + holds().size() + " locks, each with a"
                + " fencing token of its own: ask each of parts() for its token");
    }

    @Override
    public List<LockHandle> parts() {
        return List.copyOf(holds());
    }
}
