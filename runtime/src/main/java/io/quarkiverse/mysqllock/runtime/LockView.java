package io.quarkiverse.mysqllock.runtime;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockOptions;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest.WhenBusy;
import io.quarkiverse.mysqllock.runtime.jobs.JobTick;

/**
 * A distributed lock as a {@link Lock} ({@code LockManager.asLock}): each {@code lock()} of a thread holds a handle
 * until an {@code unlock()} on that thread, through this view or any other view of the same name of the same manager
 * (the holds are the thread's, not the view's). Waits without a time limit are made of bounded waits one after the
 * other, so that each stays within what the engines and the driver's socket time-outs allow. An interrupt ends the
 * engine's wait within about 100 ms ({@code INTERRUPTED}): {@code lockInterruptibly()} and {@code tryLock(time, unit)}
 * then throw {@link InterruptedException}; {@code lock()} waits again, and keeps the interrupt for its caller.
 */
final class LockView implements Lock {

    /** How long one wait of an unbounded {@code lock()} lasts before the next begins. */
    static final Duration STEP = Duration.ofMinutes(1);

    private final MySqlLockManager locks;
    private final String name;
    /** Each thread's holds taken through views, by manager and name, the last taken first. */
    private static final ThreadLocal<Map<Key, Deque<ControlledHandle>>> HELD = ThreadLocal.withInitial(HashMap::new);

    private record Key(MySqlLockManager locks, String name) {
    }

    private final Key key;

    LockView(MySqlLockManager locks, String name) {
        this.locks = locks;
        this.name = name;
        this.key = new Key(locks, name);
    }

    @Override
    public void lock() {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (take(STEP)) {
                        return;
                    }
                } catch (InterruptedException e) {
                    interrupted = true; // lock() is not interruptible: the interrupt is kept for the caller
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        while (!take(STEP)) {
            // the lock stayed busy for a whole step: wait again
        }
    }

    @Override
    public boolean tryLock() {
        // one attempt, whatever the interrupt status, which is kept for the caller
        boolean interrupted = Thread.interrupted();
        try {
            return take(Duration.ZERO);
        } catch (InterruptedException e) {
            interrupted = true;
            return false;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return take(Duration.ofNanos(Math.max(0, unit.toNanos(time))));
    }

    /** One wait of up to {@code wait}: true once the lock is held by this thread (one more time). */
    private boolean take(Duration wait) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("Interrupted before taking lock '" + name + "'");
        }
        ControlledHandle handle;
        try {
            handle = locks.acquireForMethod(name, LockOptions.waitingUpTo(wait), WhenBusy.NOTHING, (JobTick) null);
        } catch (LockNotAcquiredException e) {
            boolean interruptedNow = Thread.interrupted(); // an InterruptedException consumes the interrupt
            if (interruptedNow || e.reason() == LockNotAcquiredException.Reason.INTERRUPTED
                    || e.getCause() instanceof InterruptedException) {
                InterruptedException interrupted = new InterruptedException("Interrupted while waiting for lock '" + name
                        + "'");
                interrupted.initCause(e);
                throw interrupted;
            }
            throw e;
        }
        if (handle == null) {
            if (Thread.interrupted()) {
                // an engine's wait ended by the interrupt may answer busy, the interrupt kept: say it
                throw new InterruptedException("Interrupted while waiting for lock '" + name + "'");
            }
            return false;
        }
        HELD.get().computeIfAbsent(key, ignored -> new ArrayDeque<>()).push(handle);
        return true;
    }

    /**
     * Releases this thread's last hold.
     *
     * @throws IllegalMonitorStateException if this thread does not hold the lock through this view
     * @throws LockLostException if the lock was lost while held: it is released all the same
     */
    @Override
    public void unlock() {
        Map<Key, Deque<ControlledHandle>> all = HELD.get();
        Deque<ControlledHandle> mine = all.get(key);
        ControlledHandle handle = mine == null ? null : mine.poll();
        if (mine != null && mine.isEmpty()) {
            all.remove(key);
        }
        if (all.isEmpty()) {
            HELD.remove();
        }
        if (handle == null) {
            throw new IllegalMonitorStateException("Lock '" + name + "' is not held by this thread");
        }
        LockLostException lost = handle.releaseReportingLoss();
        if (lost != null) {
            throw ControlledHandle.lostDuring("the code holding it through Lock.lock()", lost);
        }
    }

    /** Not supported: a condition needs a monitor that every instance shares, which the database does not offer. */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("Lock '" + name + "': a distributed lock has no conditions; wait on"
                + " something the instances share (a table row, a message) instead");
    }

    @Override
    public String toString() {
        return "distributed lock '" + name + "'";
    }
}
