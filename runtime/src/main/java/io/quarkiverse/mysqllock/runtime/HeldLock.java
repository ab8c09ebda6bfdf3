package io.quarkiverse.mysqllock.runtime;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import io.quarkiverse.mysqllock.LockLostException;

/**
 * A lock an engine holds for this instance, shared by the nested holds of its owner thread. Each engine guards its
 * mutable state; {@link #lost} and {@link #released} may be read by any thread.
 */
public abstract class HeldLock {

    public final String name;
    public final String serverName;
    /** The thread that owns the hold and may nest onto it, or null for an asynchronous hold. */
    public final Thread owner;
    public final Instant since;
    /** Guarded by this. */
    private final List<Consumer<LockLostException>> listeners = new ArrayList<>();

    /** Set once, when the lock is no longer held for us. */
    public volatile LockLostException lost;
    /** Set once, when the last hold was released. */
    public volatile boolean released;

    protected HeldLock(String name, String serverName, Thread owner, Instant since) {
        this.name = name;
        this.serverName = serverName;
        this.owner = owner;
        this.since = since;
    }

    public boolean isHeld() {
        return lost == null && !released;
    }

    /** Registers a listener; returns false if the lock is already lost (the caller then calls it itself). */
    synchronized boolean addListener(Consumer<LockLostException> listener) {
        if (lost != null) {
            return false;
        }
        listeners.add(listener);
        return true;
    }

    /**
     * Marks the lock lost; returns the listeners to notify, each exactly once.
     *
     * @param atRelease the release itself found the lock gone: it was lost while held, and is reported even though
     *        the last hold has just been released
     */
    synchronized List<Consumer<LockLostException>> markLost(LockLostException cause, boolean atRelease) {
        // Atomic: the watchdog, the keepalive and a release can find the loss at the same moment (the fault suite saw
        // it after SIGCONT); the one that sets it, and only that one, notifies every listener.
        if (lost != null || (released && !atRelease)) {
            return List.of();
        }
        lost = cause;
        List<Consumer<LockLostException>> toNotify = List.copyOf(listeners);
        listeners.clear();
        return toNotify;
    }
}
