package io.quarkiverse.mysqllock.runtime.locked;

import java.time.Duration;

import io.quarkiverse.mysqllock.OnBusy;
import io.quarkus.runtime.RuntimeValue;
import io.quarkus.runtime.annotations.Recorder;

@Recorder
public class LockedRecorder {

    /** Called before the methods of this start are registered. */
    public void reset() {
        LockedMethods.clear();
    }

    /** @param resolver an instance of a generated {@link LockNameResolver}, or null when the name is fixed */
    public void register(String key, String fixedName, RuntimeValue<LockNameResolver> resolver, long waitMillis,
            OnBusy onBusy, long atLeastForMillis, long atMostForMillis, ReturnKind kind, String description, int tickParameter) {
        LockedMethods.register(key, new LockedMethod(fixedName, resolver == null ? null : resolver.getValue(),
                Duration.ofMillis(waitMillis), onBusy, Duration.ofMillis(atLeastForMillis),
                Duration.ofMillis(atMostForMillis), kind, description,
                key.substring(0, key.indexOf('(')), tickParameter));
    }
}
