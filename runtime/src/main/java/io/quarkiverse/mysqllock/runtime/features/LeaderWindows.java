package io.quarkiverse.mysqllock.runtime.features;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.runtime.coordination.TermConfirmation;
import io.quarkiverse.mysqllock.runtime.engine.LockEngine;
import io.quarkiverse.mysqllock.runtime.named.NamedLockEngine;
import io.quarkiverse.mysqllock.runtime.table.FleetRows;

/**
 * The confirmation windows of a leader's term granted now. None on LEASE (a lease's validity is bounded). On NAMED, a
 * term is confirmed within this instance's window (two keepalive intervals), after a grace of the largest window of the
 * fleet's live instances (they may run with other keepalive intervals); none when this instance and every other live
 * one hand over instantly ({@code named.instant-leader-hand-over}).
 */
public final class LeaderWindows implements Supplier<TermConfirmation.Window> {

    private final Supplier<LockEngine> engine;
    private volatile long ownNanos;
    private volatile boolean instantHandOver;

    /** @param engine the engine in use, the selecting and metering layers unwrapped */
    public LeaderWindows(Supplier<LockEngine> engine) {
        this.engine = engine;
    }

    /** This instance's window and {@code named.instant-leader-hand-over}. */
    public void configure(Duration window, boolean instant) {
        this.ownNanos = window.toNanos();
        this.instantHandOver = instant;
    }

    @Override
    public TermConfirmation.Window get() {
        LockEngine inUse = engine.get();
        if (inUse.mode() != LockMode.NAMED) {
            return TermConfirmation.Window.NONE;
        }
        long own = ownNanos;
        if (!(inUse instanceof NamedLockEngine named)) {
            return instantHandOver ? TermConfirmation.Window.NONE : new TermConfirmation.Window(own, own);
        }
        FleetRows.LeaderWindows fleet = named.leaderWindows();
        if (instantHandOver && fleet.allInstant()) {
            return TermConfirmation.Window.NONE;
        }
        return new TermConfirmation.Window(own, Math.max(own, TimeUnit.MICROSECONDS.toNanos(fleet.largestMicros())));
    }
}
