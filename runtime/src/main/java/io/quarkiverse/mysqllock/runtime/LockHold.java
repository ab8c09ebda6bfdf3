package io.quarkiverse.mysqllock.runtime;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;

/** One hold of a lock: each acquisition, nested or not, gets its own handle to release once. */
public final class LockHold<L extends HeldLock> implements LockHandle {

    private final L lock;
    private final HoldEngine<L> engine;
    private final AtomicBoolean released = new AtomicBoolean();

    public LockHold(L lock, HoldEngine<L> engine) {
        this.lock = lock;
        this.engine = engine;
    }

    @Override
    public String name() {
        return lock.name;
    }

    @Override
    public long fencingToken() {
        if (released.get()) {
            throw new IllegalStateException("Lock '" + lock.name + "' was released: its fencing token is no longer valid");
        }
        LockLostException lost = lock.lost;
        if (lost != null) {
            throw new LockLostException(lock.name, lost.reason(),
                    "Lock '" + lock.name + "' is lost: no fencing token can be issued", lost);
        }
        return engine.fencingToken(lock);
    }

    @Override
    public boolean isValid() {
        return !released.get() && engine.isValid(lock);
    }

    @Override
    public LockHandle onLost(Consumer<LockLostException> listener) {
        if (listener == null) {
            throw new IllegalArgumentException("onLost listener must not be null");
        }
        if (!lock.addListener(listener)) {
            listener.accept(lock.lost);
        }
        return this;
    }

    @Override
    public void release() {
        if (released.compareAndSet(false, true)) {
            engine.release(lock);
        }
    }

    @Override
    public void close() {
        release();
    }

    @Override
    public String toString() {
        return "LockHandle[" + lock.name + (isValid() ? ", held" : lock.lost != null ? ", lost" : ", released") + "]";
    }
}
