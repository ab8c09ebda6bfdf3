package io.quarkiverse.mysqllock.runtime.engine;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Consumer;

import io.quarkiverse.mysqllock.LockLostException;

/**
 * A lock an engine holds for this instance, shared by the nested holds of its owner thread. Each engine guards its
 * hold count; {@link #lost} and {@link #released} may be read by any thread.
 * <p>
 * Re-entrancy is for the thread whose own call holds the lock: the owner is the thread of the holds that are still
 * attached to their calls ({@link HoldHandle#detach()}), and there is none once every such hold was released or
 * detached (a late release, a handle another thread took over), so that no call nests onto a hold it does not own.
 */
public abstract class GrantedLock {

    public final String name;
    public final String serverName;
    public final Instant since;
    /** Guarded by this. */
    private final List<Consumer<LockLostException>> listeners = new ArrayList<>();
    /** The thread whose own call holds the lock, while it has attached holds; guarded by this. */
    private Thread owner;
    /** How many holds are attached to {@link #owner}'s calls; guarded by this. */
    private int ownerHolds;

    /** Set once, when the lock is no longer held for us. */
    public volatile LockLostException lost;
    /** Set once, when the last hold was released. */
    public volatile boolean released;
    /** The end of the lock at its {@code atMostFor} cap, if it has one ({@link HoldCaps}); guarded by this. */
    ScheduledFuture<?> cap;
    /** Counts the caps set, so that an end whose cap was replaced does not run; guarded by this. */
    int capGeneration;
    /**
     * The end at the cap has begun ({@link HoldCaps}): decided under this monitor, in one step with any extension, so
     * that no extension succeeds once it is set; guarded by this.
     */
    boolean capEnding;

    protected GrantedLock(String name, String serverName, Instant since) {
        this.name = name;
        this.serverName = serverName;
        this.since = since;
    }

    public boolean isHeld() {
        return lost == null && !released;
    }

    /** The thread that may nest onto this lock now, or null (an asynchronous hold, or one no call owns anymore). */
    public synchronized Thread owner() {
        return owner;
    }

    /** Whether {@code thread} (non-null) may nest onto this lock. */
    public synchronized boolean ownedBy(Thread thread) {
        return thread != null && owner == thread;
    }

    /** A hold of {@code thread}'s own call begins. */
    synchronized void attach(Thread thread) {
        owner = thread;
        ownerHolds++;
    }

    /** A hold of the owner's call was released, or no longer belongs to the call. */
    synchronized void detachOne() {
        if (ownerHolds > 0 && --ownerHolds == 0) {
            owner = null;
        }
    }

    /** Whether the lock ends at an {@code atMostFor} cap ({@link HoldCaps}). */
    public synchronized boolean capped() {
        return cap != null;
    }

    /** The lock no longer ends at its cap: released, or given another. */
    public synchronized void cancelCap() {
        capGeneration++;
        if (cap != null) {
            cap.cancel(false);
            cap = null;
        }
    }

    /** Registers a listener; returns false if the lock is already lost (the caller then calls it itself). */
    synchronized boolean addListener(Consumer<LockLostException> listener) {
        if (lost != null) {
            return false;
        }
        listeners.add(listener);
        return true;
    }

    /** Removes the listeners of a hold released before the lock was lost: they are not to be told of it. */
    synchronized void removeListeners(List<Consumer<LockLostException>> ofHold) {
        listeners.removeAll(ofHold);
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
