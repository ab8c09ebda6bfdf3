package io.quarkiverse.mysqllock.runtime.metrics;

import io.quarkiverse.mysqllock.LockEvent;

/** Where {@link LockEvent}s go: the application's CDI observers, or nowhere ({@link #NONE}) when it has none. */
@FunctionalInterface
public interface LockEventSink {

    LockEventSink NONE = event -> {
    };

    /** Delivers the event; never throws. */
    void fire(LockEvent event);
}
