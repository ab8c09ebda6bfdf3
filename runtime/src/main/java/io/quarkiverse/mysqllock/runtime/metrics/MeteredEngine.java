package io.quarkiverse.mysqllock.runtime.metrics;

import java.time.Duration;
import java.util.function.Supplier;

import io.quarkiverse.mysqllock.LockEvent;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.ForwardingEngine;
import io.quarkiverse.mysqllock.runtime.engine.LockEngine;
import io.quarkiverse.mysqllock.runtime.engine.LockMetrics;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest;

/**
 * An engine that reports every acquisition's outcome and wait, and every hold's length and loss ({@link MeteredHandle}),
 * to {@link LockMetrics}, as {@link LockEvent}s and as trace spans ({@link LockSpans}: one per acquisition, one per
 * hold); everything else goes straight through. Only built when metrics are on, the application observes lock events,
 * or spans are on ({@link #of}).
 */
public final class MeteredEngine extends ForwardingEngine {

    private final LockMetrics metrics;
    private final LockEventSink events;
    private final LockSpans spans;
    /** This instance, as its locks show it. */
    private final String holder;
    /** The engine in use, or null while it is not chosen yet (the database has not answered). */
    private final Supplier<LockMode> chosenMode;

    private MeteredEngine(LockEngine engine, LockMetrics metrics, LockEventSink events, LockSpans spans, String holder,
            Supplier<LockMode> chosenMode) {
        super(engine);
        this.metrics = metrics;
        this.events = events;
        this.spans = spans;
        this.holder = holder;
        this.chosenMode = chosenMode;
    }

    /** {@code engine} itself when metrics are off, nobody observes lock events and there are no spans. */
    public static LockEngine of(LockEngine engine, LockMetrics metrics, LockEventSink events, LockSpans spans,
            String holder, Supplier<LockMode> chosenMode) {
        return metrics == LockMetrics.NONE && events == LockEventSink.NONE && spans == LockSpans.NONE ? engine
                : new MeteredEngine(engine, metrics, events, spans, holder, chosenMode);
    }

    @Override
    public ControlledHandle acquire(LockRequest request) {
        long start = System.nanoTime();
        ControlledHandle handle;
        try {
            handle = engine.acquire(request);
        } catch (LockNotAcquiredException e) {
            long waited = System.nanoTime() - start;
            LockMode mode = chosenMode.get();
            boolean busy = e.reason() == LockNotAcquiredException.Reason.BUSY;
            LockMetrics.Outcome outcome = busy ? busy(request.waitNanos()) : LockMetrics.Outcome.ERROR;
            metrics.acquisition(mode, outcome, waited);
            spans.acquisition(request.name(), mode, busy ? lowerCase(outcome) : lowerCase(e.reason()), waited, 0,
                    busy ? null : e);
            throw e;
        }
        long waited = System.nanoTime() - start;
        LockMode mode = chosenMode.get();
        if (handle == null) {
            LockMetrics.Outcome outcome = busy(request.waitNanos());
            metrics.acquisition(mode, outcome, waited);
            spans.acquisition(request.name(), mode, lowerCase(outcome), waited, 0, null);
            return null;
        }
        metrics.acquisition(mode, LockMetrics.Outcome.ACQUIRED, waited);
        long token = knownToken(handle, mode);
        LockSpans.Hold span = spans.acquisition(handle.name(), mode, "acquired", waited, token, null);
        if (events == LockEventSink.NONE && span == null) {
            return new MeteredHandle(handle, metrics, mode, null);
        }
        // on the acquiring thread: a handle used by another thread becomes that thread's
        LockEvent acquired = new LockEvent(LockEvent.Kind.ACQUIRED, handle.name(), mode, holder, token,
                Duration.ofNanos(waited), Duration.ZERO, null);
        if (events != LockEventSink.NONE) {
            events.fire(acquired);
        }
        MeteredHandle metered = new MeteredHandle(handle, metrics, mode, endedAs(acquired, span));
        handle.onLost(metered.lossListener());
        return metered;
    }

    private static String lowerCase(Enum<?> value) {
        return value.name().toLowerCase(java.util.Locale.ROOT);
    }

    /** LEASE: the lease's fence, known without a statement; NAMED: 0 (its token costs a statement). */
    private static long knownToken(ControlledHandle handle, LockMode mode) {
        if (mode != LockMode.LEASE) {
            return 0;
        }
        try {
            return handle.fencingToken();
        } catch (RuntimeException lostAlready) {
            return 0; // the LOST event follows
        }
    }

    /** What becomes of a hold: an event like its acquisition's (if observed), the end of its span (if any). */
    private MeteredHandle.Ended endedAs(LockEvent acquired, LockSpans.Hold span) {
        return (kind, heldNanos, loss) -> {
            if (events != LockEventSink.NONE) {
                events.fire(new LockEvent(kind, acquired.name(), acquired.engine(), holder, acquired.fencingToken(),
                        Duration.ZERO, Duration.ofNanos(heldNanos), loss));
            }
            if (span != null) {
                span.ended(heldNanos, kind == LockEvent.Kind.LOST ? loss : null);
            }
        };
    }

    /** Still held elsewhere: after one attempt that is "busy", after a wait a "timeout". */
    private static LockMetrics.Outcome busy(long waitNanos) {
        return waitNanos == 0 ? LockMetrics.Outcome.BUSY : LockMetrics.Outcome.TIMEOUT;
    }

    @Override
    public void close() {
        try {
            super.close();
        } finally {
            metrics.close();
        }
    }
}
