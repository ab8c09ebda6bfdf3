package io.quarkiverse.mysqllock.runtime.lease;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;

import io.quarkiverse.mysqllock.runtime.engine.HeldLock;
import io.quarkiverse.mysqllock.runtime.engine.LocalGate;
import io.quarkiverse.mysqllock.runtime.table.OwnedLease;

/** A lease row this instance owns. Its counters are guarded by the lease's monitor. */
final class Lease extends HeldLock implements OwnedLease {

    /** Holder identity and a token unique to this acquisition: the row's {@code owner}. */
    final String ownerToken;
    final long fence;
    final LocalGate gate;
    /** False for a capped lease ({@code atMostFor}): the watchdog lets it expire. */
    final boolean renewable;
    /** Extensions of a capped lease ({@code LockHandle.extend}) run one at a time, on this monitor. */
    final Object extending = new Object();
    /** The in-JVM gate is given back exactly once: at release, or as soon as the lease is lost. */
    final AtomicBoolean gateOpened = new AtomicBoolean();

    /** Nested holds not yet released; guarded by this. */
    int holds = 1;
    /**
     * Local monotonic time until which the lease is known valid: the moment the last successful acquire or renew
     * statement was sent, plus the ttl. The server's lease ends no earlier than this.
     */
    volatile long confirmedUntilNanos;

    Lease(String name, String serverName, Instant since, String ownerToken, long fence, LocalGate gate, boolean renewable,
            long confirmedUntilNanos) {
        super(name, serverName, since);
        this.renewable = renewable;
        this.ownerToken = ownerToken;
        this.fence = fence;
        this.gate = gate;
        this.confirmedUntilNanos = confirmedUntilNanos;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String serverName() {
        return serverName;
    }

    @Override
    public String ownerToken() {
        return ownerToken;
    }
}
