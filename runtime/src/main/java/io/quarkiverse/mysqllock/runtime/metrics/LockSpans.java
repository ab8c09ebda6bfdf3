package io.quarkiverse.mysqllock.runtime.metrics;

import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockMode;

/**
 * Where the acquisitions and holds go as trace spans ({@code quarkus-opentelemetry}), or nowhere ({@link #NONE}).
 * Told after the fact, with how long each lasted: nothing is kept open while a caller waits or holds.
 */
public interface LockSpans {

    LockSpans NONE = (name, engine, outcome, waitedNanos, fencingToken, failure) -> null;

    /**
     * An acquisition ended, on the acquiring thread (its trace is the parent).
     *
     * @param outcome {@code acquired}, {@code busy}, {@code timeout}, or the reason of a refusal in lower case
     * @param fencingToken the hold's token when known without a statement (LEASE), else 0
     * @param failure why it was refused, if it was
     * @return what to tell when the hold ends, or null (not acquired, or no spans)
     */
    Hold acquisition(String name, LockMode engine, String outcome, long waitedNanos, long fencingToken,
            Throwable failure);

    /** A hold's span, told when the hold ends. */
    @FunctionalInterface
    interface Hold {

        /** @param loss null if released while held */
        void ended(long heldNanos, LockLostException loss);
    }
}
