package io.quarkiverse.mysqllock.runtime.engine;

import java.time.Instant;

/**
 * A lock of no engine, for the engine package's tests; its {@link #ENGINE} does nothing when a hold is released, so the
 * lock stays held until a test marks it released or lost.
 */
final class TestLock extends GrantedLock {

    static final GrantingEngine<TestLock> ENGINE = new GrantingEngine<>() {
        @Override
        public void release(TestLock lock) {
        }

        @Override
        public void abandon(TestLock lock, String message) {
        }

        @Override
        public long fencingToken(TestLock lock) {
            return 1;
        }
    };

    TestLock(String name) {
        super(name, name, Instant.now());
    }

    /**
     * A new hold of this lock that no thread owns (as an asynchronous one). Release it at the end of the test: a hold
     * garbage-collected while held is reported as leaked.
     */
    HoldHandle<TestLock> newHold() {
        return new HoldHandle<>(this, ENGINE, null);
    }
}
