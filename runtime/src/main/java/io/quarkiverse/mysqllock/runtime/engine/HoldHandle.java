package io.quarkiverse.mysqllock.runtime.engine;

import java.lang.ref.Cleaner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockOptions;

/**
 * One hold of a lock: each acquisition, nested or not, gets its own handle to release once. A hold taken by a thread
 * for itself belongs to that thread's call until it is released or detached; another thread using the handle detaches
 * it, since the handle then serves that thread's work.
 */
public final class HoldHandle<L extends GrantedLock> implements ControlledHandle {

    private final L lock;
    private final GrantingEngine<L> engine;
    /** What a release changes, apart from the handle: a leaked handle's cleaner releases through it. */
    private final State<L> state;
    /** Releases the hold if this handle is garbage-collected while held. */
    private final Cleaner.Cleanable leak;

    /** @param owner the thread whose own call takes this hold (it may nest onto it), or null for an asynchronous one */
    public HoldHandle(L lock, GrantingEngine<L> engine, Thread owner) {
        this.lock = lock;
        this.engine = engine;
        this.state = new State<>(lock, engine, owner);
        if (owner != null) {
            lock.attach(owner);
        }
        this.leak = HoldLeaks.watch(this, lock.name, Thread.currentThread().getName(), HoldLeaks.site(),
                state);
    }

    /** A hold's state, which must not refer to its handle (the handle's cleaner uses it). */
    private static final class State<L extends GrantedLock> implements HoldLeaks.Leaked {
        final L lock;
        final GrantingEngine<L> engine;
        final AtomicBoolean released = new AtomicBoolean();
        /** The thread whose own call this hold is, until detached. */
        final AtomicReference<Thread> call;
        /** This hold's loss listeners, removed from the lock when the hold is released; guarded by itself. */
        final List<Consumer<LockLostException>> listeners = new ArrayList<>();

        State(L lock, GrantingEngine<L> engine, Thread owner) {
            this.lock = lock;
            this.engine = engine;
            this.call = new AtomicReference<>(owner);
        }

        @Override
        public boolean released() {
            return released.get();
        }

        @Override
        public boolean releaseIfHeld() {
            if (!released.compareAndSet(false, true)) {
                return false;
            }
            detach();
            engine.release(lock); // a loss it finds is still told to this hold's listeners
            forgetListeners();
            return true;
        }

        void detach() {
            if (call.getAndSet(null) != null) {
                lock.detachOne();
            }
        }

        /** A released hold hears of no later loss of the lock (its lock may live on in other, nested, holds). */
        void forgetListeners() {
            List<Consumer<LockLostException>> mine;
            synchronized (listeners) {
                mine = List.copyOf(listeners);
                listeners.clear();
            }
            if (!mine.isEmpty()) {
                lock.removeListeners(mine);
            }
        }
    }

    /** The lock of a hold an engine has just made. */
    public static <L extends GrantedLock> L lockOf(ControlledHandle handle, Class<L> type) {
        return type.cast(((HoldHandle<?>) handle).lock);
    }

    @Override
    public String name() {
        return lock.name;
    }

    @Override
    public long fencingToken() {
        held("its fencing token is no longer valid", "no fencing token can be issued");
        return engine.fencingToken(lock);
    }

    @Override
    public boolean extend(Duration atMostFor) {
        LockOptions.leaseLength("Lock '" + lock.name + "': the new length of its lease", atMostFor);
        engine.isValid(lock); // a lease that may have ended is marked lost now
        held("it cannot be extended", "it cannot be extended");
        return engine.extend(lock, atMostFor.toNanos());
    }

    /** Throws unless this hold is neither released nor known lost. */
    private void held(String ifReleased, String ifLost) {
        usedBy(Thread.currentThread());
        if (state.released.get()) {
            throw new IllegalStateException("Lock '" + lock.name + "' was released: " + ifReleased);
        }
        LockLostException lost = lock.lost;
        if (lost != null) {
            throw new LockLostException(lock.name, lost.reason(), "Lock '" + lock.name + "' is lost: " + ifLost, lost);
        }
    }

    @Override
    public boolean confirmedWithin(long nanos) {
        return !state.released.get() && engine.confirmedWithin(lock, nanos);
    }

    @Override
    public boolean confirm(long sinceNanos) {
        return !state.released.get() && engine.confirm(lock, sinceNanos);
    }

    @Override
    public boolean isValid() {
        usedBy(Thread.currentThread());
        return !state.released.get() && engine.isValid(lock);
    }

    @Override
    public LockHandle onLost(Consumer<LockLostException> listener) {
        if (listener == null) {
            throw new IllegalArgumentException("onLost listener must not be null");
        }
        usedBy(Thread.currentThread());
        if (state.released.get()) {
            LockLostException lost = lock.lost;
            if (lost != null) {
                listener.accept(lost);
            }
            return this; // a released hold hears of no later loss
        }
        synchronized (state.listeners) {
            state.listeners.add(listener);
        }
        if (!lock.addListener(listener)) {
            listener.accept(lock.lost);
        }
        return this;
    }

    @Override
    public void release() {
        state.releaseIfHeld();
        leak.clean(); // released: nothing for the cleaner to do
    }

    @Override
    public void abandon(String why) {
        if (state.released.compareAndSet(false, true)) {
            state.detach();
            engine.abandon(lock, "Lock '" + lock.name + "' was released: " + why);
            state.forgetListeners();
        }
        leak.clean();
    }

    @Override
    public LockLostException releaseReportingLoss() {
        release();
        return lock.lost;
    }

    @Override
    public LockLostException loss() {
        return engine.isValid(lock) ? null : lock.lost;
    }

    @Override
    public void detach() {
        state.detach();
    }

    private void usedBy(Thread thread) {
        Thread owner = state.call.get();
        if (owner != null && owner != thread) {
            detach();
        }
    }

    @Override
    public void close() {
        release();
    }

    @Override
    public String toString() {
        return "LockHandle[" + lock.name + (state.released.get() ? ", released" : lock.lost != null ? ", lost" : ", held")
                + "]";
    }
}
