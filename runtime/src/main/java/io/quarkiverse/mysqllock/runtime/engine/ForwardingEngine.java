package io.quarkiverse.mysqllock.runtime.engine;

import java.util.List;
import java.util.Optional;

import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockMode;

/**
 * An engine that adds to another one's acquisitions (metering, transactions): whatever a subclass does not override
 * goes to the engine it wraps.
 */
public abstract class ForwardingEngine implements LockEngine {

    protected final LockEngine engine;

    protected ForwardingEngine(LockEngine engine) {
        this.engine = engine;
    }

    /** The engine beneath. */
    public LockEngine delegate() {
        return engine;
    }

    @Override
    public boolean isLocked(LockName lock) {
        return engine.isLocked(lock);
    }

    @Override
    public Optional<LockInfo> inspect(LockName lock) {
        return engine.inspect(lock);
    }

    @Override
    public List<LockInfo> held() {
        return engine.held();
    }

    @Override
    public List<LockInfo> holders() {
        return engine.holders();
    }

    @Override
    public boolean forceRelease(LockName lock) {
        return engine.forceRelease(lock);
    }

    @Override
    public LockMode mode() {
        return engine.mode();
    }

    @Override
    public EngineHealth health() {
        return engine.health();
    }

    @Override
    public PeriodicWork periodicWork() {
        return engine.periodicWork();
    }

    @Override
    public void close() {
        engine.close();
    }
}
