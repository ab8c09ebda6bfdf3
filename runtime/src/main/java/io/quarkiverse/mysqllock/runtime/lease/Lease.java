package io.quarkiverse.mysqllock.runtime.lease;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import io.quarkiverse.mysqllock.runtime.engine.GrantedLock;
import io.quarkiverse.mysqllock.runtime.engine.LocalGate;
import io.quarkiverse.mysqllock.runtime.table.OwnedLease;
import io.quarkiverse.mysqllock.runtime.table.OwnerTokens;

/** A lease row this instance owns. Its counters are guarded by the lease's monitor. */
final class Lease extends GrantedLock implements OwnedLease {

    /**
     * The row's {@code owner} as this lease knows it: the current token (holder identity, a token unique to this
     * acquisition and the lease's length) and the tokens before extensions whose answers were lost (the row may have any
     * of them or the current one), else none. One value, so a reader never sees a new token without the former ones; an
     * extension of a capped lease changes it, under {@link #extending}.
     */
    private volatile Tokens tokens;

    private record Tokens(String current, List<String> former) {
        List<String> all() {
            if (former.isEmpty()) {
                return List.of(current);
            }
            List<String> all = new ArrayList<>(former.size() + 1);
            all.add(current);
            all.addAll(former);
            return List.copyOf(all);
        }
    }

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
        this.tokens = new Tokens(ownerToken, List.of());
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
        return tokens.current;
    }

    @Override
    public List<String> ownerTokens() {
        return tokens.all();
    }

    /**
     * Before an extension's statement: the row will have a new token recording this length (a new version, whatever
     * the server's clock reads), or keep one of those it may have if the statement does not reach the server. Under
     * {@link #extending}.
     */
    void nextToken(long lengthMicros) {
        Tokens known = tokens;
        tokens = new Tokens(OwnerTokens.next(known.current, lengthMicros), known.all());
    }

    /** After an extension's statement answered: the row has the current token. Under {@link #extending}. */
    void extended() {
        tokens = new Tokens(tokens.current, List.of());
    }
}
