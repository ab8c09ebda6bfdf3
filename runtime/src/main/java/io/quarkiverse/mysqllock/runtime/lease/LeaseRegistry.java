package io.quarkiverse.mysqllock.runtime.lease;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.runtime.engine.LocalGate;
import io.quarkiverse.mysqllock.runtime.engine.LockTimings;
import io.quarkiverse.mysqllock.runtime.engine.LossNotifier;

/**
 * The leases this instance holds, by server name, and the in-JVM gates in front of them. A lease counts as lost as
 * soon as it may have ended on the server ({@link #overdue}); a lost lease leaves at once and opens its gate.
 */
final class LeaseRegistry {

    private final ConcurrentHashMap<String, Lease> local = new ConcurrentHashMap<>();
    private final LocalGate.Gates gates = new LocalGate.Gates();
    private final LossNotifier notifier;
    private final long ttlNanos;
    /**
     * A lease counts as lost this long before its confirmed end: the expiry check runs twice within it, so the holder is
     * told before another instance may take the lease over (which also waits this long beyond the lease's length).
     */
    private final long lossMarginNanos;
    private final Observations observations;

    LeaseRegistry(LossNotifier notifier, LockTimings timings, Observations observations) {
        this.notifier = notifier;
        this.ttlNanos = timings.ttlNanos();
        this.lossMarginNanos = timings.lossMarginNanos();
        this.observations = observations;
    }

    Lease get(String serverName) {
        return local.get(serverName);
    }

    void put(String serverName, Lease lease) {
        local.put(serverName, lease);
    }

    /** Removes the lease, if it is still the one held under its name. */
    void remove(Lease lease) {
        local.remove(lease.serverName, lease);
    }

    /** The leases held, a live view. */
    Collection<Lease> all() {
        return local.values();
    }

    int size() {
        return local.size();
    }

    LocalGate enterGate(String serverName) {
        return gates.enter(serverName);
    }

    void leaveGate(String serverName, LocalGate gate) {
        gates.leave(serverName, gate);
    }

    /** In-JVM gates in use: a measure of leaks for tests. */
    int gatesInUse() {
        return gates.size();
    }

    void openGate(Lease lease) {
        if (lease.gateOpened.compareAndSet(false, true)) {
            lease.gate.open();
            gates.leave(lease.serverName, lease.gate);
        }
    }

    void lose(Lease lease, LockLostException.Reason reason, String message, Throwable cause) {
        notifier.lose(lease, reason, message, cause);
        // told, and renewed no more: the next holder of this instance may take its row over once the lease has ended
        // as its holder counted it (it may have found it valid a moment before it was told), without watching it
        observations.ended(lease.serverName, lease.ownerTokens(), lease.confirmedUntilNanos);
        local.remove(lease.serverName, lease);
        // Other threads of this instance may now compete for the name.
        openGate(lease);
    }

    /** Every lease held is lost: the fleet may have moved to named locks, which leases do not exclude. */
    void loseAll(String why) {
        for (Lease lease : List.copyOf(local.values())) {
            if (lease.isHeld()) {
                lose(lease, LockLostException.Reason.MEMBERSHIP_LOST, "Lease '" + lease.name + "' was lost: " + why, null);
            }
        }
    }

    /**
     * Whether the lease may be taken over soon: its confirmed end (the moment the last statement that took or renewed
     * it was sent, plus its length) is less than the loss margin away. Another instance takes it over only once it saw
     * it unchanged for its length and that margin on its own clock, or once it is long dead.
     */
    boolean overdue(Lease lease, long now) {
        return now - (lease.confirmedUntilNanos - lossMarginNanos) >= 0;
    }

    /** A lease no longer than this counts as lost as soon as it is confirmed: the loss margin. */
    long shortestUsefulNanos() {
        return lossMarginNanos;
    }

    void expire(Lease lease) {
        lose(lease, LockLostException.Reason.LEASE_EXPIRED, lease.renewable
                ? "Lease '" + lease.name + "' was lost: it could not be renewed before it expired (ttl "
                        + TimeUnit.NANOSECONDS.toMillis(ttlNanos) + " ms)"
                : "Lease '" + lease.name + "' expired: it reached its atMostFor cap", null);
    }

    /** Who holds the name in this instance, for a busy message. */
    String describeLocal(String serverName) {
        Lease lease = local.get(serverName);
        return lease == null ? "another thread of this instance" : describe(lease);
    }

    static String describe(Lease lease) {
        Thread owner = lease.owner();
        return lease.ownerToken() + (owner == null ? " (asynchronous or handed over)" : " (thread '" + owner.getName() + "')");
    }
}
