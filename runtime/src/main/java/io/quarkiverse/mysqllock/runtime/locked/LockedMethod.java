package io.quarkiverse.mysqllock.runtime.locked;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Function;

import io.quarkiverse.mysqllock.LockOptions;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;

/** Everything the interceptor needs about one {@code @Locked} method, decided at build time. */
public final class LockedMethod {

    private final String fixedName;
    private final LockNameResolver resolver;
    /** The durations as written, and {@code interruptOnLoss}. */
    private final Durations durations;
    /**
     * {@code waitFor}, {@code atLeastFor}, {@code atMostFor} and {@code interruptOnLoss}: what a programmatic caller
     * asks with; set at start when a duration holds a config expression.
     */
    volatile LockOptions options;
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

    /** The members as written: a duration, or a {@code ${...}} config expression resolved at start. */
    public record Durations(String waitFor, String atLeastFor, String atMostFor, boolean interruptOnLoss) {
        boolean expressions() {
            return LockedOptions.isExpression(waitFor) || LockedOptions.isExpression(atLeastFor)
                    || LockedOptions.isExpression(atMostFor);
        }
    }

    public LockedMethod(String fixedName, LockNameResolver resolver, Durations durations, OnBusy onBusy,
            Locked.Mode mode, int permits, ReturnKind kind, String description, String key, int tickParameter,
            int handleParameter) {
        this.tickParameter = tickParameter;
        this.handleParameter = handleParameter;
        this.key = key;
        this.fixedName = fixedName;
        this.resolver = resolver;
        this.durations = durations;
        this.onBusy = onBusy;
        this.mode = mode;
        this.permits = permits;
        this.kind = kind;
        this.description = description;
        // checked by the build already, unless they hold expressions
        this.options = durations.expressions() ? null : options(property -> Optional.empty());
    }

    private LockOptions options(Function<String, Optional<String>> config) {
        return LockedOptions.options(description, durations.waitFor(), durations.atLeastFor(), durations.atMostFor(),
                durations.interruptOnLoss(), config);
    }

    /**
     * Resolves the durations' config expressions, if they have any.
     *
     * @throws IllegalArgumentException naming the method and the member
     */
    void resolve(Function<String, Optional<String>> config) {
        if (durations.expressions()) {
            options = options(config);
        }
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
