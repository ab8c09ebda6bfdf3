package io.quarkiverse.mysqllock.runtime.tracing;

import java.util.Locale;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.runtime.metrics.LockSpans;
import io.quarkus.arc.Arc;
import io.quarkus.arc.InstanceHandle;

/**
 * Lock spans through OpenTelemetry: {@code lock wait} for each acquisition (granted or not) and {@code lock hold} for
 * each hold, children of the caller's span at the acquisition, with the lock's name, engine, outcome and fencing token
 * as attributes. Loaded only when the application has {@code quarkus-opentelemetry}.
 */
public final class OpenTelemetryLockSpans implements LockSpans {

    static final AttributeKey<String> NAME = AttributeKey.stringKey("mysql_lock.name");
    static final AttributeKey<String> ENGINE = AttributeKey.stringKey("mysql_lock.engine");
    static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("mysql_lock.outcome");
    static final AttributeKey<Long> TOKEN = AttributeKey.longKey("mysql_lock.fencing_token");
    static final AttributeKey<String> LOSS = AttributeKey.stringKey("mysql_lock.loss_reason");

    private static final Logger LOG = Logger.getLogger(OpenTelemetryLockSpans.class);

    private final Tracer tracer;

    private OpenTelemetryLockSpans(Tracer tracer) {
        this.tracer = tracer;
    }

    /** The application's OpenTelemetry, or {@link LockSpans#NONE} when there is none. */
    public static LockSpans fromContainer() {
        if (Arc.container() == null) {
            return NONE;
        }
        InstanceHandle<OpenTelemetry> openTelemetry = Arc.container().instance(OpenTelemetry.class);
        return openTelemetry.isAvailable()
                ? new OpenTelemetryLockSpans(openTelemetry.get().getTracer("io.quarkiverse.mysqllock"))
                : NONE;
    }

    /** A tracing failure is logged and changes nothing for the lock. */
    @Override
    public Hold acquisition(String name, LockMode engine, String outcome, long waitedNanos, long fencingToken,
            Throwable failure) {
        try {
            return traceAcquisition(name, engine, outcome, waitedNanos, fencingToken, failure);
        } catch (RuntimeException e) {
            LOG.debugf(e, "The span of lock '%s' could not be made", name);
            return null;
        }
    }

    private Hold traceAcquisition(String name, LockMode engine, String outcome, long waitedNanos, long fencingToken,
            Throwable failure) {
        long now = nowNanos();
        Context parent = Context.current();
        Span wait = span("lock wait", parent, name, engine, now - waitedNanos).setAttribute(OUTCOME, outcome);
        if (fencingToken > 0) {
            wait.setAttribute(TOKEN, fencingToken);
        }
        if (failure != null) {
            wait.recordException(failure).setStatus(StatusCode.ERROR, failure.getMessage());
        }
        wait.end(now, TimeUnit.NANOSECONDS);
        if (failure != null || !outcome.equals("acquired")) {
            return null;
        }
        return (heldNanos, loss) -> {
            try {
                traceHold(parent, name, engine, fencingToken, heldNanos, loss);
            } catch (RuntimeException e) {
                LOG.debugf(e, "The span of lock '%s' could not be made", name);
            }
        };
    }

    private void traceHold(Context parent, String name, LockMode engine, long fencingToken, long heldNanos,
            LockLostException loss) {
        long end = nowNanos();
        Span hold = span("lock hold", parent, name, engine, end - heldNanos)
                .setAttribute(OUTCOME, loss == null ? "released" : "lost");
        if (fencingToken > 0) {
            hold.setAttribute(TOKEN, fencingToken);
        }
        if (loss != null) {
            hold.setAttribute(LOSS, loss.reason().name()).setStatus(StatusCode.ERROR, loss.getMessage());
        }
        hold.end(end, TimeUnit.NANOSECONDS);
    }

    private Span span(String what, Context parent, String name, LockMode engine, long startNanos) {
        SpanBuilder builder = tracer.spanBuilder(what).setParent(parent).setStartTimestamp(startNanos,
                TimeUnit.NANOSECONDS);
        builder.setAttribute(NAME, name);
        if (engine != null) {
            builder.setAttribute(ENGINE, engine.name().toLowerCase(Locale.ROOT));
        }
        return builder.startSpan();
    }

    /** Wall-clock nanoseconds since the epoch: the spans' time. */
    private static long nowNanos() {
        java.time.Instant now = java.time.Instant.now();
        return TimeUnit.SECONDS.toNanos(now.getEpochSecond()) + now.getNano();
    }
}
