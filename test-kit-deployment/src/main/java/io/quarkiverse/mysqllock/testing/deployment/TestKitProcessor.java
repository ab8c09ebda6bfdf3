package io.quarkiverse.mysqllock.testing.deployment;

import io.quarkus.arc.deployment.AdditionalBeanBuildItem;
import io.quarkus.deployment.IsTest;
import io.quarkus.deployment.annotations.BuildStep;

/**
 * The test kit's beans ({@code LockFaults}, {@code JobTicks}, and the recorder behind {@code LockAssert}), registered when the
 * application runs for tests: never in a production build, even if the kit were packaged by mistake.
 */
class TestKitProcessor {

    @BuildStep(onlyIf = IsTest.class)
    AdditionalBeanBuildItem testKitBeans() {
        return AdditionalBeanBuildItem.builder().setUnremovable()
                .addBeanClasses("io.quarkiverse.mysqllock.testing.LockFaults", "io.quarkiverse.mysqllock.testing.LockRecorder",
                        "io.quarkiverse.mysqllock.testing.JobTicks")
                .build();
    }
}
