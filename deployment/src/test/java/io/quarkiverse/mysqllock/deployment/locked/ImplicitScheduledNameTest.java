package io.quarkiverse.mysqllock.deployment.locked;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.enterprise.context.ApplicationScoped;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A {@code @Scheduled} method whose lock has no name of its own is named after its class and method, which change when
 * the code moves: the build warns, naming the method and a name to give it; a named one gets no such warning.
 */
class ImplicitScheduledNameTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Jobs.class)
            .setLogRecordPredicate(record -> record.getLoggerName().endsWith("LockedProcessor"))
            .assertLogRecords(records -> assertThat(records).singleElement()
                    .satisfies(record -> assertThat(String.format(record.getMessage(), record.getParameters()))
                            .contains("Jobs#unnamed()").contains("has no name of its own")
                            .contains("rolling deploy").contains("@Locked(\"" + Jobs.class.getName() + "#unnamed\")")));

    @Test
    void theBuildWarnsAboutTheUnnamedOneOnly() {
        // the log assertion above runs once the application stopped
    }

    @ApplicationScoped
    public static class Jobs {
        /** Never fires during the test; only its build-time warning matters. */
        @Scheduled(every = "1h", delayed = "1h")
        @Locked(onBusy = OnBusy.SKIP)
        void unnamed(ScheduledExecution execution) {
        }

        @Scheduled(every = "1h", delayed = "1h")
        @Locked(value = "cron:named", onBusy = OnBusy.SKIP)
        void named(ScheduledExecution execution) {
        }
    }
}
