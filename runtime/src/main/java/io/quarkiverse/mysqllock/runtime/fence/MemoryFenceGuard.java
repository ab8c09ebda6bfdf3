package io.quarkiverse.mysqllock.runtime.fence;

import java.sql.Connection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.quarkiverse.mysqllock.FenceGuard;
import io.quarkiverse.mysqllock.LockFence;

/** The newest token of each lock in this JVM's memory, for in-memory locks (tests, dev mode). */
public final class MemoryFenceGuard implements FenceGuard {

    private final Map<String, Long> newest = new ConcurrentHashMap<>();

    @Override
    public void admit(LockFence fence) {
        long after = newest.merge(fence.lock(), fence.token(), Math::max);
        FenceChecks.refuseIfStale(fence, after);
    }

    /** In memory, the connection's transaction plays no part. */
    @Override
    public void admit(LockFence fence, Connection connection) {
        admit(fence);
    }

    @Override
    public long newest(String lock) {
        return newest.getOrDefault(lock, 0L);
    }
}
