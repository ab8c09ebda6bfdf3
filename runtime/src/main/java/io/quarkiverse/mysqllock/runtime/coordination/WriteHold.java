package io.quarkiverse.mysqllock.runtime.coordination;

import java.util.ArrayList;
import java.util.List;

import io.quarkiverse.mysqllock.LockHandle;

/** A writer's hold: the gate and every read permit; fenced by the gate, released permits first. */
final class WriteHold extends CompositeHandle {

    private final String name;
    private final LockHandle gate;
    private final LockHandle readPermits;

    WriteHold(String name, LockHandle gate, LockHandle readPermits) {
        super(List.of(gate, readPermits));
        this.name = name;
        this.gate = gate;
        this.readPermits = readPermits;
    }

    @Override
    public String name() {
        return name;
    }

    /** The gate's token: every writer holds the gate, so it increases from one writer to the next. */
    @Override
    public long fencingToken() {
        return gate.fencingToken();
    }

    @Override
    public List<LockHandle> parts() {
        List<LockHandle> parts = new ArrayList<>(readPermits.parts());
        parts.add(0, gate);
        return List.copyOf(parts);
    }
}
