package io.quarkiverse.mysqllock.runtime.features;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockMode;

/**
 * {@code long-hold-warning}: how often the holds are looked at, and one warning per hold held too long.
 * <p>
 * The warnings are read from the logger's {@code java.util.logging} handlers: JBoss Logging writes there both through
 * the JBoss LogManager (the build's surefire sets {@code java.util.logging.manager}) and through the JDK's.
 */
class LongHoldsTest {

    private static final Duration THRESHOLD = Duration.ofMinutes(1);

    private final List<String> warnings = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
                // JBoss LogManager: the format and its parameters; the JDK's: the formatted message
                Object[] parameters = record.getParameters();
                warnings.add(record.getMessage() + (parameters == null ? "" : " " + Arrays.toString(parameters)));
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };
    /** Kept: the logging framework holds its loggers weakly. */
    private Logger logger;
    private final List<LockInfo> held = new CopyOnWriteArrayList<>();

    @BeforeEach
    void captureWarnings() {
        logger = Logger.getLogger(LongHolds.class.getName());
        logger.addHandler(capture);
    }

    @AfterEach
    void stopCapturing() {
        logger.removeHandler(capture);
    }

    private static LockInfo heldSince(String name, Instant since) {
        return new LockInfo(name, "host/1/test (thread 'worker-7')", since, 0, LockMode.NAMED);
    }

    private long warningsOf(String name) {
        return warnings.stream().filter(warning -> warning.contains(name)).count();
    }

    @Test
    void holdsAreLookedAtEveryQuarterOfTheThresholdButBetweenASecondAndAMinute() {
        assertThat(LongHolds.period(Duration.ofMillis(100))).isEqualTo(Duration.ofSeconds(1));
        assertThat(LongHolds.period(Duration.ofSeconds(4))).isEqualTo(Duration.ofSeconds(1));
        assertThat(LongHolds.period(Duration.ofSeconds(6))).isEqualTo(Duration.ofMillis(1500));
        assertThat(LongHolds.period(Duration.ofMinutes(2))).isEqualTo(Duration.ofSeconds(30));
        assertThat(LongHolds.period(Duration.ofMinutes(4))).isEqualTo(Duration.ofMinutes(1));
        assertThat(LongHolds.period(Duration.ofHours(6))).isEqualTo(Duration.ofMinutes(1));
    }

    @Test
    void aHoldLongerThanTheThresholdIsWarnedOfOnce() {
        held.add(heldSince("nightly-report", Instant.now().minus(Duration.ofMinutes(2))));
        held.add(heldSince("quick-job", Instant.now()));
        LongHolds watch = new LongHolds(() -> new ArrayList<>(held), THRESHOLD);

        watch.run();
        assertThat(warningsOf("nightly-report")).isEqualTo(1);
        assertThat(warningsOf("quick-job")).isZero();
        assertThat(warnings).allSatisfy(warning -> assertThat(warning).contains("quarkus.mysql-lock.long-hold-warning=")
                .contains("worker-7"));

        watch.run();
        assertThat(warningsOf("nightly-report")).as("once per hold").isEqualTo(1);
    }

    @Test
    void aNewGrantOfTheSameNameIsANewHold() {
        held.add(heldSince("nightly-report", Instant.now().minus(Duration.ofMinutes(3))));
        LongHolds watch = new LongHolds(() -> new ArrayList<>(held), THRESHOLD);
        watch.run();

        held.set(0, heldSince("nightly-report", Instant.now().minus(Duration.ofMinutes(2))));
        watch.run();

        assertThat(warningsOf("nightly-report")).isEqualTo(2);
    }

    @Test
    void aHoldIsForgottenOnceItIsNoLongerHeld() {
        LockInfo hold = heldSince("nightly-report", Instant.now().minus(Duration.ofMinutes(2)));
        held.add(hold);
        LongHolds watch = new LongHolds(() -> new ArrayList<>(held), THRESHOLD);
        watch.run();
        held.clear();
        watch.run();

        held.add(hold);
        watch.run();

        assertThat(warningsOf("nightly-report")).as("not remembered once gone").isEqualTo(2);
    }

    @Test
    void aFailedLookIsNotFatalAndTheNextOneWarns() {
        held.add(heldSince("nightly-report", Instant.now().minus(Duration.ofMinutes(2))));
        AtomicInteger looks = new AtomicInteger();
        LongHolds watch = new LongHolds(() -> {
            if (looks.incrementAndGet() == 1) {
                throw new IllegalStateException("the engine is closing");
            }
            return new ArrayList<>(held);
        }, THRESHOLD);

        assertThatCode(watch::run).doesNotThrowAnyException();
        assertThat(warnings).isEmpty();
        watch.run();
        assertThat(warningsOf("nightly-report")).isEqualTo(1);
    }
}
