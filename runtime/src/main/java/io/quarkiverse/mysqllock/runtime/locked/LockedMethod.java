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

    public LockedMethod(String fixedName, LockNameResolver resolver, Duration wait, OnBusy onBusy, Duration atLeastFor,
            Duration atMostFor, ReturnKind kind, String description, String key) {
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

    String lockName(Object[] arguments) {
        return resolver == null ? fixedName : resolver.resolve(arguments);
    }
}
