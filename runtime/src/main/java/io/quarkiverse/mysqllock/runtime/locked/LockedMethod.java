package io.quarkiverse.mysqllock.runtime.locked;

import java.time.Duration;

import io.quarkiverse.mysqllock.OnBusy;

/** Everything the interceptor needs about one {@code @Locked} method, decided at build time. */
public final class LockedMethod {

    private final String fixedName;
    private final LockNameResolver resolver;
    final Duration wait;
    final OnBusy onBusy;
    final Duration atLeastFor;
    /** LEASE engine: the lease's length, not renewed; zero for the configured ttl, renewed. */
    final Duration atMostFor;
    final ReturnKind kind;
    final String description;
    /** {@code <class>#<method>} */
    final String key;
    /**
     * The index of the {@code ScheduledExecution} parameter of a scheduled method with {@code onBusy = SKIP}, whose
     * ticks are claimed so that each runs once across the cluster; -1 for none.
     */
    final int tickParameter;

    public LockedMethod(String fixedName, LockNameResolver resolver, Duration wait, OnBusy onBusy, Duration atLeastFor,
            Duration atMostFor, ReturnKind kind, String description, String key, int tickParameter) {
        this.tickParameter = tickParameter;
        this.atMostFor = atMostFor;
        this.key = key;
        this.fixedName = fixedName;
        this.resolver = resolver;
        this.wait = wait;
        this.onBusy = onBusy;
        this.atLeastFor = atLeastFor;
        this.kind = kind;
        this.description = description;
    }

    /** The scheduled fire time of this run in epoch milliseconds; only when {@code tickParameter >= 0}. */
    long tick(Object[] arguments) {
        return ScheduledTicks.tick(arguments[tickParameter]);
    }

    String lockName(Object[] arguments) {
        return resolver == null ? fixedName : resolver.resolve(arguments);
    }
}
