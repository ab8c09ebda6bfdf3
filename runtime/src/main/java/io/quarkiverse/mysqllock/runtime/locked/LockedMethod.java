package io.quarkiverse.mysqllock.runtime.locked;

import java.time.Duration;

import io.quarkiverse.mysqllock.LockOptions;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;

/** Everything the interceptor needs about one {@code @Locked} method, decided at build time. */
public final class LockedMethod {

    private final String fixedName;
    private final LockNameResolver resolver;
    /** {@code waitFor}, {@code atLeastFor} and {@code atMostFor}: what a programmatic caller asks with. */
    final LockOptions options;
    final OnBusy onBusy;
    final Locked.Mode mode;
    /** {@link Locked.Mode#PERMIT}: the semaphore's permits. */
    final int permits;
    final ReturnKind kind;
    final String description;
    /** {@code <class>#<method>} */
    final String key;
    /**
     * The index of the {@code ScheduledExecution} parameter of an exclusive scheduled method (or one with
     * {@code onBusy = SKIP}), whose ticks are claimed so that each runs once across the cluster; -1 for none.
     */
    final int tickParameter;
    /** The index of the {@code LockHandle} parameter the interceptor gives the method's lock to; -1 for none. */
    final int handleParameter;

    public LockedMethod(String fixedName, LockNameResolver resolver, LockOptions options, OnBusy onBusy,
            Locked.Mode mode, int permits, ReturnKind kind, String description, String key, int tickParameter,
            int handleParameter) {
        this.tickParameter = tickParameter;
        this.handleParameter = handleParameter;
        this.key = key;
        this.fixedName = fixedName;
        this.resolver = resolver;
        this.options = options;
        this.onBusy = onBusy;
        this.mode = mode;
        this.permits = permits;
        this.kind = kind;
        this.description = description;
    }

    Duration waitFor() {
        return options.waitTime().orElse(Duration.ZERO);
    }

    /** The cap of the hold; zero for none. */
    Duration atMostFor() {
        return options.atMostFor();
    }

    /** The scheduled fire time of this run in epoch milliseconds; only when {@code tickParameter >= 0}. */
    long tick(Object[] arguments) {
        return ScheduledTicks.tick(arguments[tickParameter]);
    }

    String lockName(Object[] arguments) {
        return resolver == null ? fixedName : resolver.resolve(arguments);
    }
}
