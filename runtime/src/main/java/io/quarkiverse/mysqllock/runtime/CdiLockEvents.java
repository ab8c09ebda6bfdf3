package io.quarkiverse.mysqllock.runtime;

import java.time.Duration;
import java.util.Set;

import jakarta.enterprise.event.Event;
import jakarta.enterprise.inject.spi.ObserverMethod;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockEvent;
import io.quarkiverse.mysqllock.runtime.metrics.LockEventSink;
import io.quarkus.arc.Arc;
import io.quarkus.arc.ArcContainer;

/**
 * Lock events to the application's CDI observers ({@code @Observes}, {@code @ObservesAsync} {@link LockEvent}); an
 * observer that throws is logged, and changes nothing for the lock.
 */
final class CdiLockEvents implements LockEventSink {

    private static final Logger LOG = Logger.getLogger(CdiLockEvents.class);
    private static final LockEvent SAMPLE = new LockEvent(LockEvent.Kind.ACQUIRED, "", null, "", 0, Duration.ZERO,
            Duration.ZERO, null);

    private final Event<LockEvent> event;
    private final boolean sync;
    private final boolean async;

    private CdiLockEvents(Event<LockEvent> event, boolean sync, boolean async) {
        this.event = event;
        this.sync = sync;
        this.async = async;
    }

    /** The application's observers of lock events, or {@link LockEventSink#NONE} if it has none (the common case). */
    static LockEventSink ifObserved() {
        ArcContainer arc = Arc.container();
        if (arc == null) {
            return NONE;
        }
        Set<ObserverMethod<? super LockEvent>> observers = arc.beanManager().resolveObserverMethods(SAMPLE);
        boolean sync = observers.stream().anyMatch(observer -> !observer.isAsync());
        boolean async = observers.stream().anyMatch(ObserverMethod::isAsync);
        return sync || async ? new CdiLockEvents(arc.beanManager().getEvent().select(LockEvent.class), sync, async)
                : NONE;
    }

    @Override
    public void fire(LockEvent lockEvent) {
        if (sync) {
            try {
                event.fire(lockEvent);
            } catch (RuntimeException e) {
                failed(lockEvent, e);
            }
        }
        if (async) {
            event.fireAsync(lockEvent).exceptionally(e -> {
                failed(lockEvent, e);
                return null;
            });
        }
    }

    private static void failed(LockEvent lockEvent, Throwable e) {
        LOG.warnf(e, "An observer of lock event %s of lock '%s' failed; the lock is not affected", lockEvent.kind(),
                lockEvent.name());
    }
}
