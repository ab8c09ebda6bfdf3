package io.quarkiverse.mysqllock.runtime.locked;

import jakarta.interceptor.InvocationContext;

import io.quarkiverse.mysqllock.runtime.features.MethodLock;
import io.smallrye.mutiny.Uni;

/**
 * What the interceptor does with a Kotlin {@code suspend} function ({@code SuspendCall}), behind a type that names no
 * Kotlin class: the implementation is loaded by name on the first call of such a function, and registered for that by
 * the build only in applications that have one, so that the others (native images included) never need Kotlin.
 */
public interface Suspending {

    /** The function's run as a {@code Uni}, its body started on the caller's dispatcher, {@code lock} current in it. */
    Uni<Object> run(InvocationContext context, MethodLock lock);

    /** Suspends the caller until {@code outcome} ends, then resumes it with it; answered at once if it already ended. */
    Object suspendUntil(Object caller, Uni<?> outcome, boolean returnsUnit);

    /** The implementation, loaded on first use. */
    static Suspending get() {
        return Holder.INSTANCE;
    }

    /** The name of the implementation the build registers where an application has {@code suspend} functions. */
    String IMPLEMENTATION = "io.quarkiverse.mysqllock.runtime.locked.SuspendCall";

    final class Holder {
        static final Suspending INSTANCE = load();

        private Holder() {
        }

        private static Suspending load() {
            try {
                return (Suspending) Class.forName(IMPLEMENTATION, true, Suspending.class.getClassLoader())
                        .getDeclaredConstructor().newInstance();
            } catch (ReflectiveOperationException | LinkageError e) {
                throw new IllegalStateException("@Locked on a Kotlin suspend function needs kotlin-stdlib on the class"
                        + " path: " + e, e);
            }
        }
    }
}
