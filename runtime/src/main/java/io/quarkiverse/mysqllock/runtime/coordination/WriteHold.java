package io.quarkiverse.mysqllock.runtime.coordination;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;

/** A writer's hold: the gate and every read permit; fenced by the gate, released permits first. */
final class WriteHold implements LockHandle {

    private final String name;
    private final LockHandle gate;
    private final LockHandle readPermits;
    private final AtomicBoolean released = new AtomicBoolean();

    WriteHold(String name, LockHandle gate, LockHandle readPermits) {
        this.name = name;
        this.gate = gate;
        this.readPermits = readPermits;
    }

    @Override
    public String name() {
        return name;
    }

    /** The gate's token: every writer holds the gate, so it increases from one writer to the next. */
    @Override
    public long fencingToken() {
        return gate.fencingToken();
    }

    @Override
    public List<LockHandle> parts() {
        List<LockHandle> parts = new ArrayList<>(readPermits.parts());
        parts.add(0, gate);
        return List.copyOf(parts);
    }

    @Override
    public boolean isValid() {
        return !released.get() && gate.isValid() && readPermits.isValid();
    }

    /** The listener is told once, of the first of its locks lost. */
    @Override
    public LockHandle onLost(Consumer<LockLostException> listener) {
        if (listener == null) {
            throw new IllegalArgumentException("onLost listener must not be null");
        }
        AtomicBoolean told = new AtomicBoolean();
        Consumer<LockLostException> once = lost -> {
            if (told.compareAndSet(false, true)) {
                listener.accept(lost);
            }
        };
        gate.onLost(once);
        readPermits.onLost(once);
        return this;
    }

    @Override
    public void release() {
        if (released.compareAndSet(false, true)) {
            try {
                readPermits.release();
            } finally {
                gate.release();
            }
        }
    }

    @Override
    public void close() {
        release();
    }
}
