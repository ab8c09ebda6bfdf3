package io.quarkiverse.mysqllock.deployment.features;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkus.test.QuarkusUnitTest;

/**
 * {@code quarkus.mysql-lock.long-hold-warning}: a lock held longer than it is warned of, once per hold, naming the
 * lock, how long and by whom; a short hold is not.
 */
class LongHoldWarningTest {

    private static final String LOGGER = "io.quarkiverse.mysqllock.runtime.features.LongHolds";

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app()
            .overrideRuntimeConfigKey("quarkus.mysql-lock.long-hold-warning", "1s")
            .setLogRecordPredicate(record -> record.getLoggerName().equals(LOGGER))
            .assertLogRecords(records -> {
                assertThat(records).filteredOn(record -> message(record).contains("'long:first'")).hasSize(1);
                assertThat(records).noneSatisfy(record -> assertThat(message(record)).contains("long:short"));
            });

    @Inject
    LockManager locks;

    @Test
    void aLongHoldIsWarnedOfOnce() {
        List<String> warnings = new CopyOnWriteArrayList<>();
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                warnings.add(message(record));
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        java.util.logging.Logger.getLogger(LOGGER).addHandler(handler);
        try {
            locks.acquire("long:short").release();
            try (LockHandle first = locks.acquire("long:first")) {
                LockApp.await("the warning of the first hold", Duration.ofSeconds(30),
                        () -> warnings.stream().anyMatch(w -> w.contains("'long:first'")));
                assertThat(warnings).filteredOn(w -> w.contains("'long:first'")).singleElement().satisfies(w -> assertThat(w)
                        .contains("has been held for").contains("quarkus.mysql-lock.long-hold-warning=PT1S")
                        .contains("atMostFor"));
                // a later hold is warned of after further checks, which do not warn of the first one again
                try (LockHandle second = locks.acquire("long:second")) {
                    LockApp.await("the warning of the second hold", Duration.ofSeconds(30),
                            () -> warnings.stream().anyMatch(w -> w.contains("'long:second'")));
                }
                assertThat(warnings).filteredOn(w -> w.contains("'long:first'")).hasSize(1);
            }
        } finally {
            java.util.logging.Logger.getLogger(LOGGER).removeHandler(handler);
        }
    }

    private static String message(LogRecord record) {
        return record.getParameters() == null ? record.getMessage()
                : String.format(record.getMessage(), record.getParameters());
    }
}
