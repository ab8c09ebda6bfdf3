package io.quarkiverse.mysqllock.runtime.lease;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import io.quarkiverse.mysqllock.runtime.engine.HeldLock;
import io.quarkiverse.mysqllock.runtime.engine.LocalGate;
import io.quarkiverse.mysqllock.runtime.table.OwnedLease;
import io.quarkiverse.mysqllock.runtime.table.OwnerTokens;

/** A lease row this instance owns. Its counters are guarded by the lease's monitor. */
final class Lease extends HeldLock implements OwnedLease {

    /**
     * Holder identity, a token unique to this acquisition and the lease's length: the row's {@code owner}. An extension
     * of a capped lease changes the length, under {@link #extending}.
     */
    volatile String ownerToken;
    /**
     * The tokens before extensions whose answers were lost (the row may have any of them or {@link #ownerToken}), else
     * none; under {@link #extending}.
     */
    volatile List<String> formerTokens = List.of();
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

    @Override
    public List<String> ownerTokens() {
        List<String> former = formerTokens;
        if (former.isEmpty()) {
            return List.of(ownerToken);
        }
        List<String> all = new ArrayList<>(former.size() + 1);
        all.add(ownerToken);
        all.addAll(former);
        return List.copyOf(all);
    }

    /**
     * Before an extension's statement: the row will record this length in its token, or keep the one it has if the
     * statement does not reach the server. Under {@link #extending}.
     */
    void relengthen(long lengthMicros) {
        String token = OwnerTokens.relengthened(ownerToken, lengthMicros);
        if (!token.equals(ownerToken)) {
            List<String> candidates = ownerTokens();
            ownerToken = token;
            formerTokens = candidates;
        }
    }
}
