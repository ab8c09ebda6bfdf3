package io.quarkiverse.mysqllock.runtime.locked;

import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import io.quarkiverse.mysqllock.FenceGuard;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;

/** The injectable {@link FenceGuard}: the lock datasource's lock table (or memory, with in-memory locks). */
@Singleton
public class FenceGuards {

    @Produces
    @Singleton
    FenceGuard fenceGuard(LockManager locks) {
        if (locks instanceof MySqlLockManager manager && manager.fenceGuard() != null) {
            return manager.fenceGuard();
        }
        throw new IllegalStateException("No fence guard: the LockManager bean (" + locks.getClass().getName()
                + ") is not this extension's");
    }
}
