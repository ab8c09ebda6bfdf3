package io.quarkiverse.mysqllock.it;

import jakarta.inject.Singleton;

import io.quarkiverse.mysqllock.Locked;
import io.smallrye.mutiny.Uni;

/**
 * The fault suite's {@code @Locked} sections: the lock is taken by the interceptor, kept at least 30 ms after the
 * method started (a late release the calling thread must not enter again), and the critical section runs inside.
 */
@Singleton
public class FaultSections {

    /** A critical section run under the lock of {@code name}. */
    @FunctionalInterface
    public interface Section {
        void run();
    }

    @Locked(value = "{name}", waitFor = "1s", atLeastFor = "30ms")
    public void locked(String name, Section section) {
        section.run();
    }

    /** A critical section under the lock of {@code name}, released as the method returns (the transaction workload). */
    @Locked(value = "{name}", waitFor = "1s")
    public void lockedPlainly(String name, Section section) {
        section.run();
    }

    /** Fails with an {@code Error}: thrown by the method itself, or as its Uni's failure. Its lock must come back. */
    @Locked(value = "{name}", waitFor = "1s")
    public Uni<Void> failing(String name, boolean thrown) {
        if (thrown) {
            throw new AssertionError("an asynchronous @Locked method failing with an Error");
        }
        return Uni.createFrom().failure(new AssertionError("the Uni of an asynchronous @Locked method failing with an Error"));
    }
}
