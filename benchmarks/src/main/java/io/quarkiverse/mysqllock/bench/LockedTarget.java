package io.quarkiverse.mysqllock.bench;

import jakarta.enterprise.context.ApplicationScoped;

import io.quarkiverse.mysqllock.Locked;

/** An empty {@code @Locked} method: what remains is the interceptor and the lock. */
@ApplicationScoped
public class LockedTarget {

    @Locked("{0}")
    public void empty(String lockName) {
        // nothing: the measurement is the lock around it
    }
}
