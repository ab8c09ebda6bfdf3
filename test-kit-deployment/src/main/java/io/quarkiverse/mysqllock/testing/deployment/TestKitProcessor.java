package io.quarkiverse.mysqllock.deployment;

import java.util.List;

import io.quarkus.arc.deployment.AdditionalBeanBuildItem;
import io.quarkus.deployment.IsTest;
import io.quarkus.deployment.annotations.BuildStep;

/**
 * The test kit's beans ({@code quarkus-mysql-lock-test}: {@code LockFaults}, and the recorder behind
 * {@code LockAssert}), registered when the application runs for tests and the kit is on its class path: never in a
 * production build, even if the kit were packaged by mistake.
 */
class TestKitProcessor {

    static final List<String> KIT_BEANS = List.of("io.quarkiverse.mysqllock.testing.LockFaults",
            "io.quarkiverse.mysqllock.testing.LockRecorder");

    @BuildStep(onlyIf = IsTest.class)
    AdditionalBeanBuildItem testKitBeans() {
        AdditionalBeanBuildItem.Builder beans = AdditionalBeanBuildItem.builder().setUnremovable();
        boolean present = false;
        for (String bean : KIT_BEANS) {
            if (onClassPath(bean)) {
                beans.addBeanClass(bean);
                present = true;
            }
        }
        return present ? beans.build() : null;
    }

    private static boolean onClassPath(String className) {
        try {
            Class.forName(className, false, Thread.currentThread().getContextClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }
}
