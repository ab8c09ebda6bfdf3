package io.quarkiverse.mysqllock.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.it.FaultSuite.Options;
import io.quarkiverse.mysqllock.it.FaultSuite.Result;

/**
 * A short run of the fault suite on both engines (about 80 s each with start-up): every kind of fault is injected at
 * least once per engine, and any violation fails the build. {@code -Dfaults.ci.seconds} makes it longer.
 */
class FaultSuiteIT {

    @Test
    void bothEnginesSurviveEveryKindOfFault() throws Exception {
        Options defaults = Options.fromSystemProperties();
        Options options = new Options(Duration.ofSeconds(Long.getLong("faults.ci.seconds", 60)),
                List.of(LockMode.NAMED, LockMode.LEASE), 3, 8, defaults.names(), defaults.ttl(), defaults.keepalive(),
                Path.of("target/fault-suite-ci"), defaults.seed(), System.out);

        List<Result> results = FaultSuite.run(options);

        for (Result result : results) {
            assertThat(result.violations()).as("%s engine violations", result.engine()).isEmpty();
            assertThat((Long) result.figures().get("accepted writes")).as("%s accepted writes", result.engine())
                    .isGreaterThan(100);
            assertThat((java.util.Map<?, ?>) result.figures().get("faults injected")).as("%s fault kinds", result.engine())
                    .hasSize(FaultSuite.Kind.values().length);
        }
    }
}
