package io.quarkiverse.mysqllock.runtime;

import java.time.Duration;
import java.util.Set;
import java.util.function.Consumer;

import jakarta.enterprise.event.Event;
import jakarta.enterprise.inject.spi.ObserverMethod;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LeadershipGranted;
import io.quarkiverse.mysqllock.LeadershipRevoked;
import io.quarkiverse.mysqllock.LockEvent;
import io.quarkiverse.mysqllock.runtime.metrics.LockEventSink;
import io.quarkus.arc.Arc;
import io.quarkus.arc.ArcContainer;

/**
 * The extension's events to the application's CDI observers ({@code @Observes} and {@code @ObservesAsync}), built only
 * for the event types the application observes; an observer that throws is logged, and changes nothing for the lock or
 * the election.
 */
final class CdiEvents<T> implements Consumer<T> {

    private static final Logger LOG = Logger.getLogger(CdiEvents.class);
    private static final LockEvent LOCK_EVENT = new LockEvent(LockEvent.Kind.ACQUIRED, "", null, "", 0, Duration.ZERO,
            Duration.ZERO, null);

    private final Event<T> event;
    private final boolean sync;
    private final boolean async;

    private CdiEvents(Event<T> event, boolean sync, boolean async) {
        this.event = event;
        this.sync = sync;
        this.async = async;
    }

    /** The application's observers of lock events, or {@link LockEventSink#NONE} if it has none (the common case). */
    static LockEventSink lockEvents() {
        Consumer<LockEvent> observers = ifObserved(LockEvent.class, LOCK_EVENT);
        return observers == null ? LockEventSink.NONE : observers::accept;
    }

    /** The application's observers of {@link LeadershipGranted} and {@link LeadershipRevoked}. */
    static Consumer<Object> electionEvents() {
        Consumer<LeadershipGranted> granted = ifObserved(LeadershipGranted.class, new LeadershipGranted("", 0));
        Consumer<LeadershipRevoked> revoked = ifObserved(LeadershipRevoked.class,
                new LeadershipRevoked("", 0, LeadershipRevoked.Reason.LEFT, null));
        return event -> {
            if (event instanceof LeadershipGranted g && granted != null) {
                granted.accept(g);
            } else if (event instanceof LeadershipRevoked r && revoked != null) {
                revoked.accept(r);
            }
        };
    }

    /** The observers of events like {@code sample}, or null if there are none (or no CDI container). */
    private static <T> Consumer<T> ifObserved(Class<T> type, T sample) {
        ArcContainer arc = Arc.container();
        if (arc == null) {
            return null;
        }
        Set<ObserverMethod<? super T>> observers = arc.beanManager().resolveObserverMethods(sample);
        boolean sync = observers.stream().anyMatch(observer -> !observer.isAsync());
        boolean async = observers.stream().anyMatch(ObserverMethod::isAsync);
        return sync || async ? new CdiEvents<>(arc.beanManager().getEvent().select(type), sync, async) : null;
    }

    @Override
    public void accept(T value) {
        if (sync) {
            try {
                event.fire(value);
            } catch (RuntimeException | Error e) {
                failed(value, e);
            }
        }
        if (async) {
            event.fireAsync(value).exceptionally(e -> {
                failed(value, e);
                return null;
            });
        }
    }

    private static void failed(Object value, Throwable e) {
        LOG.warnf(e, "An observer of %s failed; it changes nothing", value);
    }
}
