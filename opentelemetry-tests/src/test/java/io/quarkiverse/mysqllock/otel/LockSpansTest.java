package io.quarkiverse.mysqllock.otel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.test.Await;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/**
 * With quarkus-opentelemetry, every acquisition is a {@code lock wait} span and every hold a {@code lock hold} span,
 * children of the caller's span, with the lock's name, engine, outcome and fencing token.
 */
class LockSpansTest {

    @RegisterExtension
    static final QuarkusUnitTest app = app();

    static QuarkusUnitTest app() {
        QuarkusUnitTest test = new QuarkusUnitTest().withApplicationRoot(jar -> jar.addClasses(Exporter.class))
                .overrideConfigKey("quarkus.datasource.db-kind", "mysql")
                .overrideConfigKey("quarkus.mysql-lock.mode", "lease")
                .overrideConfigKey("quarkus.otel.exporter.otlp.enabled", "false")
                .overrideConfigKey("quarkus.otel.bsp.schedule.delay", "10ms")
                .overrideConfigKey("quarkus.log.category.\"ch.vorburger\".level", "WARN");
        for (Map.Entry<String, String> entry : TestDatabase.shared().quarkusConfig().entrySet()) {
            test.overrideConfigKey(entry.getKey(), entry.getValue());
        }
        return test;
    }

    @ApplicationScoped
    public static class Exporter {
        @Produces
        @Singleton
        InMemorySpanExporter exporter() {
            return InMemorySpanExporter.create();
        }
    }

    @Inject
    LockManager locks;
    @Inject
    InMemorySpanExporter exporter;
    @Inject
    Tracer tracer;

    @BeforeEach
    void reset() {
        exporter.reset();
    }

    @Test
    void aWaitAndAHoldAreChildrenOfTheCallersSpan() {
        Span job = tracer.spanBuilder("job").startSpan();
        long token;
        try (Scope scope = job.makeCurrent()) {
            try (LockHandle lock = locks.acquire("otel:held", Duration.ZERO)) {
                token = lock.fencingToken();
            }
        } finally {
            job.end();
        }
        SpanData wait = span("lock wait", "otel:held", "acquired");
        SpanData hold = span("lock hold", "otel:held", "released");
        String trace = job.getSpanContext().getTraceId();
        assertThat(wait.getTraceId()).isEqualTo(trace);
        assertThat(wait.getParentSpanId()).isEqualTo(job.getSpanContext().getSpanId());
        assertThat(hold.getParentSpanId()).isEqualTo(job.getSpanContext().getSpanId());
        assertThat(wait.getAttributes().get(AttributeKey.stringKey("mysql_lock.outcome"))).isEqualTo("acquired");
        assertThat(wait.getAttributes().get(AttributeKey.stringKey("mysql_lock.engine"))).isEqualTo("lease");
        assertThat(hold.getAttributes().get(AttributeKey.stringKey("mysql_lock.outcome"))).isEqualTo("released");
        assertThat(hold.getAttributes().get(AttributeKey.longKey("mysql_lock.fencing_token"))).isEqualTo(token);
        assertThat(hold.getStartEpochNanos()).isGreaterThanOrEqualTo(wait.getStartEpochNanos());
        assertThat(hold.getEndEpochNanos()).isGreaterThanOrEqualTo(hold.getStartEpochNanos());
    }

    @Test
    void aBusyAcquisitionAndALossAreSpansToo() throws Exception {
        try (LockHandle held = locks.acquire("otel:busy", Duration.ZERO)) {
            assertThatThrownBy(() -> Background.supply(() -> locks.acquire("otel:busy", Duration.ZERO))
                    .get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(LockNotAcquiredException.class);
            SpanData busy = span("lock wait", "otel:busy", "busy");
            assertThat(busy.getStatus().getStatusCode()).isNotEqualTo(StatusCode.ERROR);
            // another instance ends the lease: the holder's release finds it lost
            assertThat(locks.forceRelease("otel:busy")).isTrue();
        }
        SpanData hold = span("lock hold", "otel:busy", "lost");
        assertThat(hold.getAttributes().get(AttributeKey.stringKey("mysql_lock.outcome"))).isEqualTo("lost");
        assertThat(hold.getAttributes().get(AttributeKey.stringKey("mysql_lock.loss_reason"))).isEqualTo("NOT_HELD");
        assertThat(hold.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    }

    /** The span of that lock with that outcome, once exported. */
    private SpanData span(String what, String lock, String outcome) {
        Await.until("a '" + what + "' span of " + lock + ", " + outcome, Duration.ofSeconds(10),
                () -> find(what, lock, outcome).isPresent());
        return find(what, lock, outcome).orElseThrow();
    }

    private java.util.Optional<SpanData> find(String what, String lock, String outcome) {
        return exporter.getFinishedSpanItems().stream().filter(s -> s.getName().equals(what)
                && lock.equals(s.getAttributes().get(AttributeKey.stringKey("mysql_lock.name")))
                && outcome.equals(s.getAttributes().get(AttributeKey.stringKey("mysql_lock.outcome")))).findFirst();
    }
}
